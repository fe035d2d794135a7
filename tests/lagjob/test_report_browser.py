"""The report page Spark produced from `mqctl demo`, in a real headless browser ("Done
when"): a script added at the end of the page measures what the browser drew (the storm bands'
width in GID_MIXED's timeline, the status table rows and their computed colours, GID_POP's
note and lanes) and leaves it in an attribute that ``--dump-dom`` shows. Skipped like
tests/lagjob/test_html_browser.py where no Chromium/Chrome is installed."""

from __future__ import annotations

import json

import pytest

from .test_html_browser import BROWSER, CATCH, _Dom, _run

pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no headless browser: install Chromium (Debian: apt-get install -y "
    "chromium; ./dev test does) or set MQCTL_BROWSER to a Chrome/Chromium binary")

# what the browser drew, per group section and per status table row
MEASURE = """<script>(function(){
var out={sections:{},rows:[]};
document.querySelectorAll('section.group').forEach(function(s){
  var name=s.querySelector('.gname').textContent, w=0, n=0;
  s.querySelectorAll('svg.timeline rect.storm').forEach(function(r){n++;w+=r.getBBox().width;});
  var pop=s.querySelector('svg.timeline text.pop-note');
  out.sections[name]={storms:n,stormWidth:w,lanes:s.querySelectorAll('text.lane').length,
    owners:s.querySelectorAll('rect.own').length,
    pop:pop?pop.textContent:null,popWidth:pop?pop.getBBox().width:0,
    why:Array.from(s.querySelectorAll('ul.why li')).map(function(li){return li.textContent;})};
});
var head=Array.from(document.querySelectorAll('table.status thead th')).map(
  function(th){return th.textContent;});
document.querySelectorAll('table.status tbody tr').forEach(function(tr){
  var cells={};
  tr.querySelectorAll('td').forEach(function(td,i){cells[head[i]]=td.textContent;});
  cells._background=getComputedStyle(tr.querySelector('td')).backgroundColor;
  out.rows.push(cells);
});
document.documentElement.setAttribute('data-drawn',JSON.stringify(out));
})();</script>"""


@pytest.fixture(scope="module")
def drawn(demo_report, tmp_path_factory):
    _cap, res = demo_report
    tmp = tmp_path_factory.mktemp("report-browser")
    with open(res.paths["html"], encoding="utf-8") as fh:
        page = fh.read()
    page = page.replace("<head>", "<head>" + CATCH, 1).replace("</body>", MEASURE + "</body>")
    path = tmp / "report.html"
    path.write_text(page, encoding="utf-8")
    r = _run(["--dump-dom", path.as_uri()], tmp)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = _Dom()
    dom.feed(r.stdout)
    root = dom.all("html")[0]
    assert "data-js-errors" not in root, root.get("data-js-errors")
    return json.loads(root["data-drawn"])


@pytest.mark.spark
def test_storm_bands_drawn_for_the_churning_group_only(drawn):
    s = drawn["sections"]
    assert s["GID_MIXED"]["storms"] >= 1 and s["GID_MIXED"]["stormWidth"] > 100
    assert s["GID_MIXED"]["why"][0].startswith("rebalance storm from ")
    # a join, a leave and a crash are rebalances, not a storm
    assert s["GID_PAY"]["storms"] == 0 and s["GID_ORDER"]["storms"] == 0


@pytest.mark.spark
def test_status_rows_for_every_group_coloured_by_health(drawn):
    rows = {(r["group"], r["topic"]): r for r in drawn["rows"]}
    assert {g for g, _t in rows} == {"GID_PAY", "GID_AUDIT", "GID_ORDER", "GID_MIXED",
                                     "GID_DUP", "GID_NEWS", "GID_POP", "GID_REPLAY"}
    # GID_MIXED: status OK, but the row is red: the group is in a storm (health ERR)
    mixed = rows[("GID_MIXED", "TopicMixed")]
    assert (mixed["status"], mixed["health"]) == ("OK", "ERR")
    assert mixed["_background"] == "rgb(255, 214, 218)"
    # the broadcast group: listed, grey, with its reason; nothing judged
    news = rows[("GID_NEWS", "TopicNews")]
    assert (news["status"], news["health"], news["lag"]) == ("-", "-", "-")
    assert news["why"] == "broadcast: offsets are kept by the clients"
    assert news["_background"] == "rgb(240, 240, 240)"
    dup = rows[("GID_DUP", "TopicAudit")]
    assert dup["status"].startswith("STALL (") and dup["status"].endswith(" of 8 queues)")


@pytest.mark.spark
def test_pop_group_says_it_has_no_queue_owners(drawn):
    pop = drawn["sections"]["GID_POP"]
    assert pop["pop"].startswith("pop: no queue owners") and pop["popWidth"] > 100
    assert pop["lanes"] == 0 and pop["owners"] == 0  # no empty lanes
    # a group with owners still has its lanes
    assert drawn["sections"]["GID_ORDER"]["owners"] > 0
