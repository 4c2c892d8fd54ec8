"""The pytest plug-in's inputs under the fuzz's hostile files (tests/cli/fuzz_inputs.py): what
`pytest_configure` checks (the config, its scenarios and backends, the baseline files, the output path)
either passes or is an `EvalkitError`, which the plug-in reports as one line (pytest's usage error); no
other exception, and no file written. In process, so it is cheap; `EVALKIT_FUZZ` as in tests/cli."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st

from evalkit.errors import EvalkitError
from evalkit.integrations.pytest_plugin import EvalkitSession
from tests.cli.fuzz_inputs import Bases, make_bases, results_file, yaml_file

_PROFILE = os.environ.get("EVALKIT_FUZZ", "")
EXAMPLES = 300 if _PROFILE == "slow" else int(_PROFILE) if _PROFILE.isdigit() else 15


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> Bases:
    return make_bases(tmp_path_factory.mktemp("bases"))


def _files(folder: Path) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def test_the_plugins_input_checks_raise_only_evalkit_errors(bases: Bases) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=not _PROFILE,
        phases=[Phase.explicit, Phase.generate],
        verbosity=Verbosity.quiet,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(st.data())
    def example(data: st.DataObject) -> None:
        with tempfile.TemporaryDirectory(prefix="fuzz-plugin-") as tmp, contextlib.chdir(tmp):
            folder = Path(tmp)
            config, baseline = folder / "c.yaml", folder / "b.jsonl"
            config.write_bytes(data.draw(yaml_file(yaml.safe_dump(bases.config))))
            baseline.write_bytes(data.draw(results_file(bases.baseline)))
            out = data.draw(st.sampled_from([None, folder / "out.jsonl", baseline, folder / "c.yaml" / "x"]))
            before = _files(folder)
            with contextlib.suppress(EvalkitError):  # pytest_configure reports it as one line
                EvalkitSession.checked(config, [baseline], out)
            assert _files(folder) == before, "the input checks wrote a file"

    example()
