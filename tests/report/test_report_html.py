"""The HTML report: one self-contained file, escaped model output, strict templates, the SIMULATED banner."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jinja2
import pytest

from evalkit.cli import main
from evalkit.report import render
from evalkit.report.data import build_report
from evalkit.report.html import environment, render_html
from evalkit.report.plots import heatmap
from evalkit.stats import proportions
from tests.report import records
from tests.report.test_report_data import XSS_ARGUMENT, XSS_REPLY, XSS_TOOL, SimRun, shared_sim_run

URL_ATTRIBUTES = {"src", "href", "xlink:href", "action", "formaction", "poster", "data", "srcset", "background"}


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> SimRun:
    return shared_sim_run(tmp_path_factory)


class Page(HTMLParser):
    """Every start tag with its attributes, the text of every table cell, and the ids."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if ident := dict(attrs).get("id"):
            self.ids.add(ident)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


@pytest.fixture(scope="module")
def html(sim_run: SimRun) -> str:
    return render_html(sim_run.data)


@pytest.fixture(scope="module")
def page(html: str) -> Page:
    return Page(html)


def test_self_contained_no_network_urls_and_no_scripts(html: str, page: Page) -> None:
    urls = [
        (tag, name, value)
        for tag, attrs in page.tags
        for name, value in attrs.items()
        if name in URL_ATTRIBUTES and value is not None
    ]
    assert urls  # the page does link: its navigation and drill-downs
    outside = [u for u in urls if not (u[2].startswith("#") or u[2].startswith("data:"))]
    assert outside == []  # every link is in-page, every embedded resource a data: URL
    assert page.named("script") == [] and page.named("link") == [] and page.named("iframe") == []
    assert not re.search(r"url\(\s*['\"]?(?!data:|#)", html)  # CSS fetches nothing either
    assert "@import" not in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.IGNORECASE)


def test_css_is_inline(page: Page, html: str) -> None:
    head = html[: html.index("</head>")]
    assert head.count("<style>") == 1 and "table.matrix" in head and "--fg:" in head  # report.css, pasted in
    assert len(page.named("style")) == 1 + len(page.named("svg"))  # plus matplotlib's own, one per SVG


def test_plots_are_embedded_as_inline_svg(page: Page, html: str, sim_run: SimRun) -> None:
    figures = {attrs.get("id") for attrs in page.named("figure")}
    families = [r for r in sim_run.data.rows if r.kind == "family"]
    forests = {f"plot-forest-{i}" for i in range(len(families))}  # one forest plot per family
    # the simulated run's latency is no measurement: no latency plot (tests/report/test_findings_claims.py)
    assert figures == forests | {"plot-heatmap", "plot-retries", "plot-failures"}
    assert len(page.named("svg")) == len(figures)
    assert all(attrs.get("src", "").startswith("data:") for attrs in page.named("img"))  # type: ignore[union-attr]
    # ids are unique in the page (four inline SVGs share one id space) and every reference resolves
    ids = [attrs["id"] for _, attrs in page.tags if attrs.get("id")]
    assert len(ids) == len(set(ids))
    references = set(re.findall(r'url\(#([^)"]+)\)', html)) | set(re.findall(r'href="#([^"]*)"', html))
    assert len(references) > 20 and references <= set(ids)


def test_heatmap_names_the_model_when_several_share_a_strategy(sim_run: SimRun) -> None:
    svg = heatmap(sim_run.data)
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    for column in sim_run.data.columns:  # the same strategy names under two models must stay apart
        assert column.group + (" [SIM]" if column.simulated else "") in labels
    single = records.results(records.cell_runs(3, 4, strategy="a") + records.cell_runs(2, 4, strategy="b"))
    assert "sim · m · native" not in heatmap(build_report(single, include_power=False))  # one model: the mode


def test_model_output_is_escaped_never_raw(html: str, page: Page) -> None:
    for payload in (XSS_REPLY, XSS_ARGUMENT, XSS_TOOL):
        assert payload.split(">")[0] + ">" not in html  # no raw tag from the untrusted text
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; done" in html
    assert "&lt;img src=x onerror=alert(&#39;tool&#39;)&gt;" in html  # the tool result, escaped
    assert page.named("script") == []
    handlers = [(tag, name) for tag, attrs in page.tags for name in attrs if name.lower().startswith("on")]
    assert handlers == []
    # and a reader sees the text itself, inside a collapsible transcript
    assert any(XSS_REPLY in t for t in page.text)


def test_transcripts_are_collapsible_failed_and_passing(page: Page, sim_run: SimRun) -> None:
    classes = [attrs.get("class") or "" for attrs in page.named("details")]
    failed = sum(c == "transcript failed" for c in classes)
    passing = sum(c == "transcript passing" for c in classes)
    assert failed == sum(len(d.failed) for d in sim_run.data.drilldowns) > 0
    assert passing == sum(d.passing is not None for d in sim_run.data.drilldowns) > 0
    drilldown_ids = {d.id for d in sim_run.data.drilldowns}
    assert drilldown_ids <= page.ids
    hrefs = [attrs.get("href") or "" for attrs in page.named("a")]
    links = {href[1:] for href in hrefs if href.startswith("#d-")}
    assert links == drilldown_ids  # every scenario cell of the matrix links to its drill-down


def test_matrix_shows_rate_interval_retries_and_colour(html: str, sim_run: SimRun) -> None:
    data = sim_run.data
    table = html[html.index('<table class="matrix" id="matrix-table">') :]
    table = table[: table.index("</table>")]
    matrix = Page(table)
    assert [t for t in matrix.text if t.strip() in {c.strategy for c in data.columns}] == [
        c.strategy for c in data.columns
    ]
    assert len(matrix.named("tr")) == 2 + len(data.rows)
    cells = matrix.named("td")
    assert len(cells) == len(data.rows) * len(data.columns)
    for attrs in cells:
        assert re.fullmatch(r"background: hsl\(\d+, 70%, 82%\)", attrs.get("style") or "")
    overall = data.cell(data.rows[0], data.columns[0])
    assert overall is not None and overall.completed is not None and overall.correct is not None
    x, n = overall.correct.x, overall.correct.n
    wilson = proportions.wilson(x, n)
    shown = f"<b>{x / n * 100:.0f}%</b>"
    assert shown in table  # correct leads the cell
    assert f"[{wilson.low * 100:.0f}–{wilson.high * 100:.0f}]" in table
    assert f"c {overall.completed.value * 100:.0f}% · r{overall.retries_mean:.1f}" in table
    assert f'title="{x}/{n} correct, {overall.completed.x}/{n} completed; latency median' in table


def test_header_has_provenance(html: str, sim_run: SimRun) -> None:
    header = sim_run.results.headers[0]
    for fact in (
        header.config_hash,
        header.git_sha or "unknown",
        header.evalkit_version,
        header.started_at,
        str(header.seed),
        str(sim_run.path),
        "small-local",
        "strong",
        "sim-small",
        "sim-strong",
    ):
        assert fact in html
    assert "2026-01-01T00:00:00+00:00" in html  # generated_at, as passed in
    assert f"<td>{header.runs_per_cell}</td>" in html


def test_power_statement_and_comparisons_are_shown(html: str, sim_run: SimRun) -> None:
    power = sim_run.data.power
    assert power is not None
    assert power.summary in html
    strategies = [c for c in sim_run.data.comparisons if c.kind == "strategy"]
    models = [c for c in sim_run.data.comparisons if c.kind == "model"]
    assert f"Holm's correction runs over all {len(sim_run.data.comparisons)} comparisons" in html
    for kind in (strategies, models):
        assert f"<p>{sum(c.significant for c in kind)} of {len(kind)} differ significantly.</p>" in html
    assert "Model against model, per strategy and family" in html and "Holm p" in html


def test_simulated_banner_when_any_result_is_simulated(html: str, page: Page) -> None:
    assert "simulated-banner" in page.ids
    assert "SIMULATED RESULTS." in html
    assert re.search(r"<title>\[SIMULATED\] ", html)


def test_no_banner_for_real_results() -> None:
    real = render_html(build_report(records.results(records.cell_runs(4, 5), simulated=False), include_power=False))
    page = Page(real)
    assert "simulated-banner" not in page.ids
    assert "SIMULATED" not in real and 'class="sim"' not in real
    one_simulated = [*records.cell_runs(4, 5), records.run(index=5, simulated=True)]
    assert (
        "simulated-banner" in Page(render_html(build_report(records.results(one_simulated), include_power=False))).ids
    )


def test_titles_and_names_are_escaped_too() -> None:
    runs = records.cell_runs(2, 3, strategy="<b>bold</b>", scenario="<i>s</i>")
    out = render_html(build_report(records.results(runs), title="<script>t()</script>", include_power=False))
    assert "<script>" not in out and "<b>bold</b>" not in out and "<i>s</i>" not in out
    assert "&lt;script&gt;t()&lt;/script&gt;" in out and "&lt;b&gt;bold&lt;/b&gt;" in out


def test_environment_autoescapes_and_undefined_variables_are_errors() -> None:
    env = environment()
    assert env.undefined is jinja2.StrictUndefined
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ data.nope }}").render(data=object())


class _Without:
    """Report data with one attribute taken away, as a template typo would see it."""

    def __init__(self, data: Any, missing: str):
        self._data, self._missing = data, missing

    def __getattr__(self, name: str) -> Any:
        if name == self._missing:
            raise AttributeError(name)
        return getattr(self._data, name)


@pytest.mark.parametrize("missing", ["title", "power", "provenance"])
def test_the_real_template_fails_on_a_missing_value(sim_run: SimRun, missing: str) -> None:
    template = environment().get_template("report.html.j2")
    with pytest.raises(jinja2.UndefinedError):
        template.render(data=_Without(sim_run.data, missing), plots={}, version="x")


def test_cli_writes_the_html_report(sim_run: SimRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "reports" / "r.html"
    assert main(["report", str(sim_run.path), "-o", str(out), "--title", "CLI report"]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out} (SIMULATED results)"
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<title>[SIMULATED] CLI report</title>" in text
    assert out.stat().st_mode & 0o777 == 0o644
    assert not list(out.parent.glob(".r.html.*"))  # no temporary file left behind


def test_cli_default_output_is_named_after_the_config(
    sim_run: SimRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(sim_run.path)]) == 0
    assert (tmp_path / "reports" / "report-test.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_cli_default_output_never_replaces_a_report_silently(
    sim_run: SimRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without -o, an existing reports/<config>.html (a committed one, say) is refused, not overwritten."""
    monkeypatch.chdir(tmp_path)
    existing = tmp_path / "reports" / "report-test.html"
    existing.parent.mkdir()
    existing.write_text("mine", encoding="utf-8")
    assert main(["report", str(sim_run.path)]) == 2
    assert "pass -o reports/report-test.html to replace it" in capsys.readouterr().err
    assert existing.read_text(encoding="utf-8") == "mine"
    assert main(["report", str(sim_run.path), "-o", str(existing)]) == 0
    assert existing.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_unknown_format_is_refused(sim_run: SimRun) -> None:
    with pytest.raises(ValueError, match="unknown report format"):
        render(sim_run.data, "pdf")  # type: ignore[arg-type]


def test_cli_reports_an_unreadable_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read" in err
    assert not (tmp_path / "r.html").exists()
