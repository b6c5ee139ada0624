"""`python train.py ...` in a checkout: PPO self-play, distillation from teacher data and fine-tuning.

The code is `euchre_lab/training/train.py` (installed as the command `euchre-train`); `import train` gives that module.
"""

import sys

import euchre_lab.training.train as _tool

if __name__ == "__main__":
    sys.exit(_tool.main())
sys.modules[__name__] = _tool
