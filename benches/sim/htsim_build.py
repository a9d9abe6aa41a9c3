#!/usr/bin/env python3
"""Builds the counting htsim_tcp that benches/sim/htsim_compare.py runs.

Takes a scratch copy of csg-htsim's `sim/` folder (Broadcom/csg-htsim,
measured at 841d9e7), edits it in place and builds it with its own
Makefiles (`make` in sim/, `make htsim_tcp` in sim/datacenter/). Never
point it at anything inside this repository. The edits (ours, by string
replacement, so a changed upstream fails loudly):

  * pipe.cpp: a global counter of `Pipe::receivePacket` calls (every link
    a packet crosses; htsim_tcp's ACKs cross none) and one of events;
  * datacenter/main_tcp.cpp: options -linkspeed MBPS, -q PACKETS (queue
    size), -end US (end time), -hoplat US (link latency), -flowsize BYTES,
    -seed N; the fat-tree built with them (RANDOM queues as before); a
    `BENCH pair SRC DST` line per connection; the event loop timed and
    `BENCH events E data_hops H loop_wall_s W sim_end_us T` printed after it.

Usage: python3 benches/sim/htsim_build.py /tmp/htsim/sim
"""

import os
import subprocess
import sys

EDITS = {
    "pipe.cpp": [
        ("Pipe::Pipe(", "uint64_t g_pipe_hops = 0;\nuint64_t g_events = 0;\nPipe::Pipe("),
        (
            "    if (_count == 0){\n        /* no packets",
            "    g_pipe_hops++;\n    if (_count == 0){\n        /* no packets",
        ),
    ],
    "datacenter/main_tcp.cpp": [
        (
            "#include <list>\n",
            "#include <list>\n#include <chrono>\nextern uint64_t g_pipe_hops;\nextern uint64_t g_events;\n",
        ),
        (
            '        else if (!strcmp(argv[i],"-sub")){',
            '        else if (!strcmp(argv[i],"-linkspeed")){ linkspeed = speedFromMbps(atof(argv[i+1])); i++; }\n'
            '        else if (!strcmp(argv[i],"-q")){ opt_q = atoi(argv[i+1]); i++; }\n'
            '        else if (!strcmp(argv[i],"-end")){ opt_end_us = atof(argv[i+1]); i++; }\n'
            '        else if (!strcmp(argv[i],"-hoplat")){ opt_hoplat_us = atof(argv[i+1]); i++; }\n'
            '        else if (!strcmp(argv[i],"-flowsize")){ opt_flowsize = atoll(argv[i+1]); i++; }\n'
            '        else if (!strcmp(argv[i],"-seed")){ opt_seed = atoi(argv[i+1]); i++; }\n'
            '        else if (!strcmp(argv[i],"-sub")){',
        ),
        (
            "    int i = 1;\n",
            "    int i = 1;\n    int opt_q = 8; double opt_end_us = 0; double opt_hoplat_us = 1;"
            " long long opt_flowsize = 0; int opt_seed = 1;\n",
        ),
        (
            "    FatTreeTopology* top = new FatTreeTopology(no_of_nodes, linkspeed, memFromPkt(8),"
            " &qlf, &eventlist,ff,RANDOM,0);",
            "    srand(opt_seed); srandom(opt_seed);\n"
            "    if (opt_end_us > 0) eventlist.setEndtime(timeFromUs(opt_end_us));\n"
            "    FatTreeTopology* top = new FatTreeTopology(no_of_nodes, linkspeed, memFromPkt(opt_q),"
            " &qlf, &eventlist,ff,RANDOM,timeFromUs(opt_hoplat_us),0,FAIR_PRIO);",
        ),
        (
            "            dest = destinations->at(dst_id);\n",
            "            dest = destinations->at(dst_id);\n"
            '            cout << "BENCH pair " << src << " " << dest << endl;\n',
        ),
        (
            "                        tcpSrc = new TcpSrc(NULL, NULL, eventlist);\n",
            "                        tcpSrc = new TcpSrc(NULL, NULL, eventlist);\n"
            "                        if (opt_flowsize > 0) tcpSrc->set_flowsize(opt_flowsize);\n",
        ),
        (
            "    while (eventlist.doNextEvent()) {\n    }",
            "    auto t0 = std::chrono::steady_clock::now();\n"
            "    while (eventlist.doNextEvent()) {\n        g_events++;\n    }\n"
            "    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();\n"
            '    cout << "BENCH events " << g_events << " data_hops " << g_pipe_hops << " loop_wall_s "'
            ' << wall << " sim_end_us " << timeAsUs(eventlist.now()) << endl;',
        ),
    ],
}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sim = os.path.abspath(sys.argv[1])
    for name, edits in EDITS.items():
        path = os.path.join(sim, name)
        with open(path) as f:
            text = f.read()
        if "g_pipe_hops" in text:
            continue  # already edited
        for old, new in edits:
            if text.count(old) != 1:
                sys.exit(f"{path}: expected exactly one {old[:60]!r}")
            text = text.replace(old, new)
        with open(path, "w") as f:
            f.write(text)
    subprocess.run(["make", "-j1"], cwd=sim, check=True)
    subprocess.run(["make", "htsim_tcp"], cwd=os.path.join(sim, "datacenter"), check=True)
    print(os.path.join(sim, "datacenter", "htsim_tcp"))


if __name__ == "__main__":
    main()
