"""Evaluation: evaluate.py's duplicate-deal matches and round robins, their statistics, ratings, reports and
journals, and the backends (a process pool, Ray) every tool's chunks of work run on."""
