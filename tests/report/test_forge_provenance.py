"""The report's provenance names the guard code that ran: each server phase's packages (a Forge
proxy's forge-guardrails version and wheel hash) and the header's `guards` (the in-process `forge`
strategy's), in the HTML and markdown reports."""

from __future__ import annotations

from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.report.markdown import render_markdown
from tests.report.records import results, run

WHEEL = "463e8115cbcb6a0389759c0fc97d63c825481664b404609e4e1e6d99320239c9"
PROXY = {
    "kind": "openai",
    "model": "smollm2",
    "started_by_evalkit": {
        "phases": [
            {"name": "llama-server", "packages": []},
            {
                "name": "forge",
                "python": "3.12.1",
                "packages": [{"name": "forge-guardrails", "version": "0.7.3", "record_sha256": "ab" * 32,
                              "wheel_sha256": WHEEL}],
            },
        ]
    },
}  # fmt: skip


def _data():  # type: ignore[no-untyped-def]
    loaded = results([run(backend="forge-proxy", model="smollm2")], backends={"forge-proxy": PROXY})
    loaded.headers[0].guards = {"forge": {"package": "forge-guardrails", "version": "0.10.0", "sha256": "cd" * 32}}
    return build_report(loaded, include_power=False)


def test_phase_packages_and_guard_code_are_in_the_provenance() -> None:
    data = _data()
    (backend,) = data.provenance.backends
    essentials = dict(backend.essentials)
    assert essentials["forge phase"] == "forge-guardrails 0.7.3 (Python 3.12.1)"
    assert essentials["wheel sha256"] == WHEEL  # the wheel's, before the RECORD's
    assert data.provenance.guards == (("forge", f"forge-guardrails 0.10.0 · sha256 {'cd' * 32}"),)


def test_both_reports_show_them() -> None:
    data = _data()
    html = render_html(data)
    assert "forge-guardrails 0.7.3 (Python 3.12.1)" in html and f"<code>{WHEEL}</code>" in html
    assert 'id="guard-code"' in html and "forge-guardrails 0.10.0" in html
    md = render_markdown(data)
    assert "forge-proxy: openai smollm2 (forge: forge-guardrails 0.7.3 (Python 3.12.1))" in md
    assert "- guard code: forge = forge-guardrails 0.10.0" in md


FILES = "ef" * 32


def test_the_installed_files_hash_and_modified_files_are_shown() -> None:
    package = {"name": "forge-guardrails", "version": "0.10.0", "files_sha256": FILES, "files": 56,
               "modified": ["forge/proxy/server.py"], "wheel_sha256": WHEEL}  # fmt: skip
    proxy = {**PROXY, "started_by_evalkit": {"phases": [{"name": "forge", "python": "3.12.1", "packages": [package]}]}}
    loaded = results([run(backend="forge-proxy", model="smollm2")], backends={"forge-proxy": proxy})
    loaded.headers[0].guards = {
        "forge": {"package": "forge-guardrails", "version": "0.10.0", "sha256": WHEEL, "files_sha256": FILES,
                  "modified": ["forge/guardrails.py"]}
    }  # fmt: skip
    data = build_report(loaded, include_power=False)
    (backend,) = data.provenance.backends
    assert backend.essentials[:4] == (
        ("forge phase", "forge-guardrails 0.10.0 (Python 3.12.1)"),
        ("files sha256", FILES),
        ("wheel sha256", WHEEL),
        ("modified files", "forge/proxy/server.py"),
    )
    ((_, guard),) = data.provenance.guards
    assert guard.endswith(f"files sha256 {FILES} · modified files forge/guardrails.py")
    html = render_html(data)
    assert f"<code>{FILES}</code>" in html and "forge/proxy/server.py" in html and "forge/guardrails.py" in html


def test_an_old_record_hash_alone_is_shown_as_one_installs() -> None:
    package = {"name": "forge-guardrails", "version": "0.7.3", "record_sha256": "ab" * 32}
    proxy = {**PROXY, "started_by_evalkit": {"phases": [{"name": "forge", "packages": [package]}]}}
    loaded = results([run(backend="forge-proxy", model="smollm2")], backends={"forge-proxy": proxy})
    (backend,) = build_report(loaded, include_power=False).provenance.backends
    assert ("RECORD sha256 (of one install, not of the code)", "ab" * 32) in backend.essentials
