"""`python -m approxnet.testbed up|down|status|plan|exec ...`."""

from .cli import testbed

if __name__ == "__main__":
    testbed(prog_name="python -m approxnet.testbed")
