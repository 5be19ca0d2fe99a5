"""``python -m probes`` and ``torchrun ... -m probes``."""

import sys

from probes.cli import main

if __name__ == "__main__":
    try:
        code = main()
    except KeyboardInterrupt:  # one line per rank, as `gpuplan probe run` says it, not a
        # 40-line traceback from every rank under torchrun
        try:
            print("error: interrupted (Ctrl-C); reports are written whole or not at all",
                  file=sys.stderr, flush=True)
        except (OSError, ValueError):  # a closed stderr: the exit status says it
            pass
        code = 130
    raise SystemExit(code)
