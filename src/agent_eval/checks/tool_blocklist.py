"""tool_blocklist: forbidden tools were never called (docs/config.md "tool_blocklist")."""

from typing import Literal

from pydantic import Field

from agent_eval.checks._text import unjudged
from agent_eval.checks.base import CheckCore, CheckSpec, CompileContext
from agent_eval.config.models import Selectors, TestBase
from agent_eval.coverage import VACUOUS, ToolRef
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.model import Trace, calls_to_read
from agent_eval.rule_ids import (
    TOOL_BLOCKLIST,
    TOOL_BLOCKLIST_NOT_AN_OBJECT,
    TOOL_BLOCKLIST_NOT_RECORDED,
    TOOL_BLOCKLIST_WRONG_TYPE,
    Rule,
)
from agent_eval.selectors import Selector


class ToolBlocklistTest(TestBase):
    metric: Literal["tool_blocklist"]
    blocklist: Selectors = Field(description="Tools that must never be called: names, globs, "
                                 "@groups or {tool, args} selectors (the calls of a tool "
                                 "with certain arguments).")


class ToolBlocklist(CheckCore):
    metric = "tool_blocklist"

    def __init__(self, cfg: ToolBlocklistTest, matcher: Selector,
                 refs: tuple[ConfigRef, ...], tool_refs: tuple[ToolRef, ...]) -> None:
        super().__init__(cfg, tool_refs)
        self.matcher = matcher
        self.refs = refs

    def touches(self, name: str) -> bool:
        return self.matcher(name)

    def findings(self, trace: Trace) -> list[Finding]:  # one per tool: held until the end
        judge = self.matcher.judge
        # where the calls are, not the calls: a very long trace's, read from disk, would
        # be held again (an agent looping on a blocked tool)
        hits: dict[tuple[str, int], list[TraceRef]] | None = None
        # the calls an item's argument conditions could not judge, by tool, item and rule
        # (not recorded, not an object, an argument of another type), with why (the first's)
        unknown: dict[tuple[str, int, Rule], tuple[tuple[str, str], list[TraceRef]]] | None \
            = None
        for call in calls_to_read(trace.tool_calls, self.matcher.names):  # a name may block
            index, found = judge(call)
            if index is not None:
                if hits is None:
                    hits = {}
                loc = call.location
                hits.setdefault((call.name, index), []).append(
                    TraceRef(loc.file, loc.line, trace.id))
            elif found is not None:
                if unknown is None:
                    unknown = {}
                loc = call.location
                index, unfit = found
                rule = (TOOL_BLOCKLIST_WRONG_TYPE if unfit is not None else
                        TOOL_BLOCKLIST_NOT_AN_OBJECT if call.arguments_recorded else
                        TOOL_BLOCKLIST_NOT_RECORDED)
                unknown.setdefault((call.name, index, rule), (unjudged(call, unfit), []))[
                    1].append(TraceRef(loc.file, loc.line, trace.id))
        out = [] if hits is None else self._blocked(hits, trace)
        if unknown is not None:
            out += self._not_checked(unknown, trace)
        return out

    def _blocked(self, hits: dict[tuple[str, int], list[TraceRef]], trace: Trace
                 ) -> list[Finding]:
        out = []
        for (name, index), where in hits.items():
            pattern = self.matcher.patterns[index]
            out.append(Finding(
                rule=TOOL_BLOCKLIST.id,
                severity=self.severity,
                message=f"Blocked tool called: {name} (blocklist includes '{pattern}'); "
                f"calls found: {len(where)}",
                test=self.id,
                config=self.refs[index],
                trace=where[0],
                tool=name,
                constraint=f"blocklist: {pattern}",
                scenario=trace.scenario,
                related=tuple(where[1:]),
                details={"calls": len(where), "pattern": pattern},
            ))
        return out

    def _not_checked(self, calls: dict[tuple[str, int, Rule],
                                       tuple[tuple[str, str], list[TraceRef]]],
                     trace: Trace) -> list[Finding]:
        """One finding per tool, blocklist entry and rule whose argument conditions could
        not judge its calls, as args_valid's: arguments not recorded are a warning (a note
        when the test's severity is note); arguments not an object, or an argument of a JSON
        type a condition cannot judge, are of the test's severity. Never a pass, and not a
        blocked call either."""
        out = []
        warning: Severity = "note" if self.severity == "note" else "warning"
        for (name, index, rule), ((why, violation), where) in calls.items():
            pattern = self.matcher.patterns[index]
            ref = self.refs[index]
            out.append(Finding(
                rule=rule.id,
                severity=warning if rule is TOOL_BLOCKLIST_NOT_RECORDED else self.severity,
                message=f"{name}: the call's {why}; whether it is blocked by "
                f"'{pattern}' ({ref.file}:{ref.line}) could not be checked; calls found: "
                f"{len(where)}",
                test=self.id,
                config=ref,
                trace=where[0],
                tool=name,
                constraint=f"blocklist: {pattern}",
                scenario=trace.scenario,
                related=tuple(where[1:]),
                details={"calls": len(where), "pattern": pattern, "violation": violation},
            ))
        return out


def compile_test(cfg: ToolBlocklistTest, ctx: CompileContext) -> ToolBlocklist:
    if not isinstance(cfg.blocklist, list):
        refs: tuple[ConfigRef, ...] = (ctx.ref("blocklist"),)
    else:
        refs = tuple(ctx.ref("blocklist", i) for i in range(len(cfg.blocklist)))
    selector = ctx.selector(cfg.blocklist, "blocklist")
    return ToolBlocklist(cfg, selector, refs,
                         tuple(ctx.selector_refs(selector, cfg.blocklist, "blocklist entry",
                                                 "blocklist", effect=VACUOUS)))


SPEC = CheckSpec("tool_blocklist", ToolBlocklistTest, compile_test,
                 (TOOL_BLOCKLIST.id, TOOL_BLOCKLIST_NOT_AN_OBJECT.id,
                  TOOL_BLOCKLIST_NOT_RECORDED.id, TOOL_BLOCKLIST_WRONG_TYPE.id))
