"""The iteration-16 agent with its trunk's linear layers in int8 (dynamic quantization): a play-out bot."""
import warnings
from pathlib import Path

import torch

from euchre_agents.ppo import PPOAgent

WEIGHTS = Path(__file__).with_name("iter_016.pt")


def agent(engine, seed=None):
    """PPOAgent of iter_016.pt, its trunk quantized to int8."""
    warnings.filterwarnings("ignore")
    bot = PPOAgent.from_checkpoint(engine, str(WEIGHTS), seed=seed)
    bot.net.trunk = torch.ao.quantization.quantize_dynamic(bot.net.trunk, {torch.nn.Linear}, dtype=torch.qint8)
    return bot
