"""Scenarios: the YAML model (`model`), mocked tools (`mocks`, `statemocks`), and the argument matcher
the mocks and the checks share (`matching`)."""
