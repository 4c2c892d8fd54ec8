"""The exception tree. Every error evalkit raises on purpose derives from `EvalkitError`.

    EvalkitError
     ├── ConfigError        a config file or option is unusable
     │    └── NotInstalled      a valid config needs what this machine lacks (a model package, a venv)
     ├── ScenarioError      a scenario file is unusable (names file, field path, line)
     ├── SpecError          an argument spec uses an unknown operator or a bad operand
     ├── ResultsError       a results file is unreadable or does not match a resume
     ├── BackendError       a backend failed; `retryable` says whether trying again may help
     │    ├── UnsupportedFeature  the backend cannot do what a strategy or mode needs
     │    ├── BackendUnusable     a server of a pool refuses the credentials: the run stops (exit 3)
     │    └── TooManyInfraErrors  more of a backend's runs than `max_infra_error_rate` were infra errors (exit 3)
     ├── ReplayMiss         a replay backend has no recording for a request
     ├── GateInputError     gate inputs cannot be compared (exit code 2)
     ├── MissingExtra       a feature's optional extra is not installed (names the pip command)
     └── OutputError        a file the user asked for (report, JUnit, markdown) cannot be written

`evalkit.cli.main` is the only place that maps these to exit codes.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BackendUnusable",
    "ConfigError",
    "EvalkitError",
    "GateInputError",
    "MissingExtra",
    "ModelUnavailable",
    "NotInstalled",
    "OutputError",
    "ReplayMiss",
    "ResultsError",
    "ScenarioError",
    "ServerUnavailable",
    "SpecError",
    "TooManyInfraErrors",
    "UnsupportedFeature",
]


class EvalkitError(Exception):
    """Root of every error evalkit raises deliberately."""


class ConfigError(EvalkitError):
    """A run config (or a command-line option) cannot be used."""


class NotInstalled(ConfigError):
    """A config is valid, but running it needs something not installed here (a model's package, a
    phase's venv, Python 3.12 with Forge): `validate` notes it and passes the file; `run` refuses."""


class MissingExtra(EvalkitError):
    """A feature needs a package of one of evalkit's optional extras that is not installed; the
    message names the extra and the command that installs it."""


class ScenarioError(EvalkitError):
    """A scenario file cannot be used; the message starts with the file name."""

    def __init__(self, path: str, problem: str, *, field: str | None = None, line: int | None = None):
        self.path = path
        self.problem = problem
        self.field = field
        self.line = line
        where = path + (f":{line}" if line else "")
        what = f"{field}: {problem}" if field else problem
        super().__init__(f"{where}: {what}")


class SpecError(EvalkitError):
    """An argument spec (a mock's `when`, a check's arguments) cannot be used for matching."""


class ResultsError(EvalkitError):
    """A results file is unreadable, or does not belong to the run being resumed."""


class BackendError(EvalkitError):
    """A backend call failed. `retryable` errors (timeouts, 429, 5xx) are retried by the runner."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class UnsupportedFeature(BackendError):
    """A strategy or tool mode needs a feature this backend lacks; the cell is `unsupported`."""


class BackendUnusable(BackendError):
    """A backend cannot serve this run at all (a pool's server refuses the credentials): not a
    run's infra error but the run's end, since every later call to it would fail the same way."""


class TooManyInfraErrors(BackendError):
    """A run ended, but more of a backend's runs than the config's `max_infra_error_rate` were infra
    errors: the backend was down or broken, and the results file measures that, not the model."""


class ReplayMiss(EvalkitError):
    """A replayed request was not recorded (the request changed, or the recording is missing)."""


class GateInputError(EvalkitError):
    """The gate's inputs cannot be compared: mismatched scenarios, empty cells, too many infra errors."""


class OutputError(EvalkitError):
    """A file the user asked for cannot be written (read-only folder, full disk, a directory in the way)."""


class ServerUnavailable(BackendError):
    """llama-server cannot be started: not installed, crashed, or never became healthy."""


class ModelUnavailable(ServerUnavailable):
    """The package that ships a model is not installed, or its file is broken."""
