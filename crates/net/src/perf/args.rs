//! A small `--key value` argument parser (no dependency needed).

use std::collections::HashMap;
use std::str::FromStr;

/// Parsed command line: a command word and its options.
pub(crate) struct Args {
    pub(crate) command: String,
    opts: HashMap<String, String>,
    flags: Vec<String>,
}

/// Flags that take no value.
const FLAGS: [&str; 3] = ["json", "udplite", "help"];

impl Args {
    pub(crate) fn parse(argv: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut argv = argv.peekable();
        let command = argv.next().ok_or("missing command")?;
        let mut opts = HashMap::new();
        let mut flags = Vec::new();
        while let Some(a) = argv.next() {
            let key = a
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument `{a}`"))?
                .to_string();
            if FLAGS.contains(&key.as_str()) {
                flags.push(key);
            } else {
                let v = argv
                    .next()
                    .ok_or_else(|| format!("--{key} needs a value"))?;
                opts.insert(key, v);
            }
        }
        Ok(Args {
            command,
            opts,
            flags,
        })
    }

    pub(crate) fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    pub(crate) fn get<T: FromStr>(&mut self, name: &str, default: T) -> Result<T, String> {
        match self.opts.remove(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name}: cannot parse `{v}`")),
        }
    }

    pub(crate) fn get_str(&mut self, name: &str) -> Option<String> {
        self.opts.remove(name)
    }

    /// Fails on options nobody asked for (typos).
    pub(crate) fn finish(&self) -> Result<(), String> {
        match self.opts.keys().next() {
            Some(k) => Err(format!("unknown option --{k}")),
            None => Ok(()),
        }
    }
}
