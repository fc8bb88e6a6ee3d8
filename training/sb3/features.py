"""Feature extractor: ranch planes through a small CNN, the other views through an MLP."""

from __future__ import annotations

import gymnasium
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from moonriver_env.moonriver.observation import ObservationEncoder


class RanchCNN(BaseFeaturesExtractor):
    """Reads the documented observation views: ``ranches`` as a (4*C, 10, 5) image, rest flat."""

    def __init__(self, observation_space: gymnasium.spaces.Box, features_dim: int = 256,
                 channels: int = 32) -> None:
        super().__init__(observation_space, features_dim)
        view = ObservationEncoder().views["ranches"]
        players, planes, rows, cols = view.shape
        self.start, self.stop = view.start, view.stop
        self.image_shape = (players * planes, rows, cols)
        self.cnn = nn.Sequential(
            nn.Conv2d(players * planes, channels, 3, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
            nn.Flatten(),
        )
        rest = observation_space.shape[0] - (self.stop - self.start)
        self.mlp = nn.Sequential(nn.Linear(rest, 128), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(channels * rows * cols + 128, features_dim),
                                  nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Features of a batch of flat observations."""
        ranches = observations[:, self.start:self.stop].reshape(-1, *self.image_shape)
        rest = torch.cat([observations[:, :self.start], observations[:, self.stop:]], dim=1)
        features: torch.Tensor = self.head(torch.cat([self.cnn(ranches), self.mlp(rest)], dim=1))
        return features
