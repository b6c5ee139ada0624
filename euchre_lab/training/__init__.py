"""Training: train.py's stages (PPO self-play and fine-tuning, distillation, the exploitability probe), their options,
checks, runs and checkpoints, and the teacher-data and export tools."""
