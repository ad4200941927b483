"""Tests of dex_agents_testing run from the repository root or Bazel alike."""
