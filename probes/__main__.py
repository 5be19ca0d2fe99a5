"""``python -m probes`` and ``torchrun ... -m probes``."""

from probes.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
