"""`python evaluate.py ...` in a checkout: duplicate-deal matches, ratings and plots.

The code is `euchre_lab/evaluation/evaluate.py` (installed as the command `euchre-evaluate`); `import evaluate` gives that module.
"""

import sys

import euchre_lab.evaluation.evaluate as _tool

if __name__ == "__main__":
    sys.exit(_tool.main())
sys.modules[__name__] = _tool
