"""Streaming parser of LLM output carrying A2UI (protocols.md §5.8 "Streaming parser").

An agent's LLM writes conversational text with ``<a2ui-json>[...]</a2ui-json>`` blocks. Fed the response
chunk by chunk, :class:`StreamParser` returns at once the text outside blocks and, inside them, A2UI
messages as soon as they can be shown: complete start / data-model / delete messages, and for components
one synthesized update holding every component reachable from the root, with placeholders for children
not seen yet and cut strings healed. What it yields at every chunk is pinned by the conformance suite
(the upstream reference SDK's behaviour), including its quirks, so it is reproduced exactly.

Why it is fast where the reference is quadratic: every input character is scanned once (runs of plain
characters are skipped with a regex); the textual facts the reference re-searches its whole buffer for
on every delimiter (latest ``surfaceId``, ``root``, message kinds) are indexed as characters arrive;
only the JSON objects still open whose keys can matter are healed and parsed at a chunk end;
reachability is maintained incrementally (:mod:`askgate.a2ui.stream_topology`); a shown component is
rewritten and serialized only when it or one of its missing children changes; and a synthesized update is
validated per changed component (cached) instead of as a whole, when the schema allows that split.

Returned message objects may be shared between successive results: treat them as read-only.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from itertools import filterfalse
from json.encoder import encode_basestring_ascii
from typing import Any, Callable

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.errors import A2uiError, IntegrityError, ParseError
from askgate.a2ui.integrity import check_limits_and_paths, component_ref_fields
from askgate.a2ui.parts import ResponsePart
from askgate.a2ui.stream_components import (
    CHILD_FIELDS,
    GROWTH_NAMES,
    PlaceholderIds,
    Processed,
    acceptable_partial,
    grow_component,
    patch_component,
    placeholder_body,
    process_component,
    required_fields,
)
from askgate.a2ui.stream_dump import MARKER as _MARKER
from askgate.a2ui.stream_dump import dump as _dump
from askgate.a2ui.stream_dump import dump_sorted as _dump_sorted
from askgate.a2ui.stream_dump import dump_with_list_parts, list_text, template_dumper
from askgate.a2ui.stream_growth import GROWTH_MIN, UNKNOWN_GROWTH, appended_strings, list_at, with_list
from askgate.a2ui.stream_heal import HealScan, heal_fragment
from askgate.a2ui.stream_topology import Topology

__all__ = ["OPEN_TAG", "CLOSE_TAG", "ResponsePart", "StreamParser"]

OPEN_TAG = "<a2ui-json>"
CLOSE_TAG = "</a2ui-json>"

_SU, _BR, _DMU, _DS = "surfaceUpdate", "beginRendering", "dataModelUpdate", "deleteSurface"
_CS, _UC, _UDM = "createSurface", "updateComponents", "updateDataModel"
_V08_TYPES = (_BR, _SU, _DMU, _DS)
_V09_TYPES = (_CS, _UC, _UDM)
_ACTIVE_SETTERS = (_SU, _UC, _CS)

# Scanner stops: outside strings the structural characters and the delimiters the reference reacts to;
# inside strings the quote, the escape and the delimiters (which only matter when a sniff is due).
_STOP_OUT = re.compile(r'["{}\[\]:]')
_STOP_IN = re.compile(r'["\\]')
# While a sniff is due, every delimiter the reference sniffs on is a stop too.
_STOP_OUT_DUE = re.compile(r'["{}\[\]:,]')
_STOP_IN_DUE = re.compile(r'["\\:,}\]]')
_DELIMS = frozenset('":,}]')


def _run_token(names: tuple[str, ...]) -> re.Pattern[str]:
    """The tokens of a run (``_scan_run``), as group 1: a string without escapes closed in the chunk (with
    the colon right after it, if any), a structural character, or a lone quote (a string left open or
    holding an escape). Before each, skipped in one go, what the machine does nothing with: plain
    characters, and strings (with their colon) and colons that neither end a tracked term, name a key
    that is noted, nor follow a quote the machine would look back from (one at the chunk start, one after
    a term's last letter, a colon right after a quote outside the match)."""
    quiet_string = rf'(?<=[^{"".join(sorted(_TERM_ENDS))}])"(?!(?:{"|".join(map(re.escape, names))})")[^"\\]*":?'
    return re.compile(rf'(?:[^"{{}}\[\]:]+|{quiet_string}|(?<=[^"]):)*+("[^"\\]*":?|["{{}}\[\]:])')
# JSON's insignificant whitespace, deleted by str.translate.
_NO_SPACE = str.maketrans("", "", " \t\n\r")
# Last letters of the quoted terms tracked in the buffer (a quote after anything else ends no term).
_TERM_ENDS = frozenset("dtsel")
# Raw lengths of the keys noted per open object: id, component and the message kinds.
_KEY_LENGTHS = frozenset({2, 9, 13, 14, 15, 16})

# Flags of an open object: which keys appear directly in it (a superset of its parsed keys).
_F_ID, _F_COMPONENT, _F_DM, _F_PROTOCOL = 1, 2, 4, 8
_F_ID_COMPONENT = _F_ID | _F_COMPONENT


_scan_once = json.decoder.JSONDecoder().scan_once  # the C scanner json.loads ends up in
_space = json.decoder.WHITESPACE.match


def _loads(text: str) -> Any:
    """``json.loads(text)`` for a str, without the Python layers around the C scanner (two to three
    calls per chunk). Anything unusual (an error, a byte-order mark) goes to ``json.loads`` itself, so
    results and errors are exactly its own."""
    try:
        if text[:1] == "{":  # a healed or closed object: no leading space, no byte-order mark
            obj, end = _scan_once(text, 0)
            if end == len(text) or _space(text, end).end() == len(text):
                return obj
        else:
            obj, end = _scan_once(text, _space(text, 0).end())
            if _space(text, end).end() == len(text) and not text.startswith("\ufeff"):
                return obj
    except StopIteration:
        pass
    return json.loads(text)




class _Buffer:
    """The JSON text of the open block, as pieces (appends are cheap; reads are near the end)."""

    __slots__ = ("pieces", "starts", "length")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.starts: list[int] = []
        self.length = 0

    def append(self, text: str) -> None:
        if text:
            self.starts.append(self.length)
            self.pieces.append(text)
            self.length += len(text)
            if len(self.pieces) > 512:
                self._compact()

    def _compact(self) -> None:
        text = "".join(self.pieces)
        self.pieces = [text] if text else []
        self.starts = [0] if text else []

    def text(self) -> str:
        self._compact()
        return self.pieces[0] if self.pieces else ""

    def _norm(self, pos: int) -> int:
        if pos < 0:
            pos = max(0, self.length + pos)
        return pos

    def from_(self, pos: int) -> str:
        """``text[pos:]`` with Python slice semantics."""
        if pos < 0:
            pos = max(0, self.length + pos)
        if pos >= self.length:
            return ""
        i = bisect_right(self.starts, pos) - 1
        first = self.pieces[i][pos - self.starts[i] :]
        if i == len(self.pieces) - 1:
            return first
        return first + "".join(self.pieces[i + 1 :])

    def tail(self, size: int) -> str:
        return self.from_(max(0, self.length - size))

    def truncate(self, pos: int) -> None:
        """Keep ``text[:pos]``."""
        pos = self._norm(pos)
        if pos >= self.length:
            return
        i = bisect_right(self.starts, pos) - 1
        if i < 0:
            self.pieces, self.starts, self.length = [], [], 0
            return
        keep = self.pieces[i][: pos - self.starts[i]]
        del self.pieces[i:]
        del self.starts[i:]
        self.length = self.starts[-1] + len(self.pieces[-1]) if self.pieces else 0
        self.append(keep)

    def set(self, text: str) -> None:
        self.pieces = [text] if text else []
        self.starts = [0] if text else []
        self.length = len(text)


class _Value:
    """One occurrence of ``"surfaceId"`` / ``"root"`` in the buffer and whether a string value follows."""

    __slots__ = ("pos", "state", "value", "end")

    def __init__(self, pos: int) -> None:
        self.pos = pos
        self.state = 0  # 0 undecided, 1 matched, 2 cannot match
        self.value: str | None = None
        self.end = pos


class StreamParser:
    """Incremental parser of one LLM response for one catalog (v0.9 when ``catalog.version == "0.9"``)."""

    # Slots: ~90 attributes are more than an instance dict shares its keys for, and the hot loops read
    # them at every step (3.5 % fewer instructions per benchmark stream than a dict).
    __slots__ = (
        "_active", "_bad", "_bad_known", "_buf", "_buf_version", "_bufdep", "_buffered_start", "_catalog",
        "_children_cache", "_close_dirty", "_cmp_sid", "_colon_bare", "_colon_terms", "_contents", "_covered",
        "_default_root", "_deleted", "_dm_term", "_dm_type", "_elements", "_epoch", "_esc", "_extras_seen",
        "_fast_scan", "_found_json", "_growth_memo", "_healed", "_in_block", "_in_str", "_in_top",
        "_key_bits", "_kind_terms", "_latest_dirty", "_latest_value", "_limits", "_list_tail", "_loading_ids",
        "_msg_types", "_out", "_out_dirty", "_out_ids", "_out_version", "_patches", "_pending_msgs",
        "_ph_bad", "_ph_comp", "_ph_derived", "_ph_dump", "_ph_dumper", "_ph_list", "_ph_ok", "_ph_shown",
        "_ph_synced", "_ph_valid", "_pids", "_proc", "_quote_terms", "_raw", "_raw_ok", "_registered",
        "_required", "_rewrite_names", "_root_ids", "_run_re", "_schema_valid", "_seen", "_settled",
        "_shown_src", "_sniff_due", "_sole_memo", "_splice", "_splittable", "_stack", "_stale", "_started",
        "_str_escaped", "_str_start", "_surface", "_surfaces", "_text", "_topo", "_topology_dirty",
        "_touched", "_types", "_unbound_root", "_v09", "_validator", "_values", "_verdicts", "_waiting",
        "_with_ph", "_yielded_dm", "_yielded_ids",
    )

    def __init__(self, catalog: A2uiCatalog) -> None:
        self._catalog = catalog
        self._v09 = catalog.version == "0.9"
        getter = getattr(catalog, "validator", None)
        if callable(getter):
            self._validator = getter()
        else:  # pragma: no cover - every A2uiCatalog has it
            from askgate.a2ui.validator import A2uiValidator

            self._validator = A2uiValidator(catalog)
        self._required = required_fields(catalog.version, catalog.s2c_schema, catalog.catalog_schema)
        self._topo = Topology(component_ref_fields(catalog.version, catalog.s2c_schema, catalog.catalog_schema))
        self._splittable = _split_validation_ok(catalog.s2c_schema)
        self._types = _V09_TYPES if self._v09 else _V08_TYPES
        # Key names whose presence in a component's text means it may be rewritten for display.
        self._rewrite_names = tuple(f'"{f}"' for f in CHILD_FIELDS) + (("\\u",) if self._v09 else ('"path"', "\\u"))
        self._dm_type = _UDM if self._v09 else _DMU
        self._dm_term = f'"{self._dm_type}"'
        # What a key (unquoted text) tells about the object it is in: one look-up where the scanners note it.
        self._key_bits: dict[str, int] = {t: _F_PROTOCOL | (_F_DM if t == self._dm_type else 0) for t in self._types}
        self._key_bits.update({"id": _F_ID, "component": _F_COMPONENT})

        # Text level.
        self._in_block = False
        self._text = ""
        # JSON level (reset per block).
        self._buf = _Buffer()
        self._stack: list[list[Any]] = []  # [opener, start index, key flags, HealScan | None]
        self._in_top = False
        self._in_str = False
        self._esc = False
        self._str_start = -1
        self._str_escaped = False
        self._found_json = False
        self._quote_terms: dict[str, list[int]] = {}
        self._colon_terms: dict[str, list[int]] = {}
        self._values: dict[str, list[_Value]] = {}
        self._reset_terms()
        self._sniff_due = True
        # Message level (kept across blocks).
        self._seen: dict[Any, Any] = {}
        self._raw: dict[Any, str] = {}
        self._yielded_dm: dict[Any, Any] = {}
        self._deleted: set[Any] = set()
        self._yielded_ids: dict[Any, set[Any]] = {}
        self._contents: dict[Any, dict[Any, str]] = {}
        self._root_ids: dict[Any, Any] = {}
        self._default_root: str | None = "root" if self._v09 else None
        self._unbound_root: Any = None
        self._surface: Any = None
        self._msg_types: list[str] = []
        self._active: str | None = None
        self._started: set[Any] = set()
        self._surfaces: set[Any] = set()
        self._pending_msgs: dict[Any, list[Any]] = {}
        self._buffered_start: Any = None
        self._topology_dirty = False
        # A component closed as it was last shown (``_same_as_shown``): the reference yields again there,
        # which changes nothing when nothing ``_yield_reachable`` reads changed since its last clean run
        # (``_settled``); decided at the chunk end, when every change of the chunk is known.
        self._close_dirty = False
        # Bumped by everything outside ``_yield_reachable`` that changes what it reads: a write to
        # ``_seen`` (so to the topology), a sniff (surface, root, message kinds), a complete message (the
        # surface sets, the buffered start message), a new block or top-level object.
        self._epoch = 0
        self._settled = -1  # ``_epoch`` at the end of the last clean run (-1: none)
        # Shown-component cache.
        self._proc: dict[Any, tuple[Processed, str]] = {}
        self._shown_src: dict[Any, Any] = {}  # cid -> the seen version its shown form was made from
        self._stale: set[Any] = set()
        self._waiting: dict[Any, set[Any]] = {}
        self._patches: dict[Any, list[Any]] = {}
        self._registered: dict[Any, set[Any]] = {}  # cid -> children it waits for (in _waiting)
        self._extras_seen: Any = None  # the last placeholder list whose components exist
        self._ph_synced: tuple[Any, Any] | None = None  # (sid, placeholder list) all shown to sid as is
        self._ph_valid: tuple[Any, Any] | None = None  # (sid, placeholder list) all known valid for sid
        # (placeholder list, the list it was derived from, the ids appended, the positions deleted): the
        # first is the second with those positions deleted one after the other, then the third appended,
        # so what is known of all ids of the second (made, shown to a surface, valid for it) only has to be
        # found out for the third, and the placeholder components of the first follow from the second's.
        self._ph_derived: tuple[list[str], list[str], list[str], list[int]] | None = None
        self._loading_ids = 0  # reachable components whose id looks like a placeholder id
        # (yielded ids, reach, its size, topology's grown list, its length then): reach <= yielded ids.
        self._covered: tuple[set[Any], set[Any], int, list[Any], int] | None = None
        self._out_ids: list[Any] = []
        self._out: list[Any] = []
        self._out_version = -1
        self._out_dirty: set[Any] = set()
        self._with_ph: set[Any] = set()
        self._bufdep: set[Any] = set()
        self._touched: set[Any] = set()
        self._cmp_sid: Any = None
        self._bad: dict[Any, set[Any]] = {}
        self._bad_known: set[Any] = set()
        self._verdicts: dict[tuple[Any, str], bool] = {}
        self._limits: dict[str, bool] = {}
        self._pids = PlaceholderIds()
        self._ph_dumper = template_dumper(placeholder_body(self._v09))
        self._ph_comp: dict[str, dict[str, Any]] = {}
        self._ph_dump: dict[str, str] = {}
        self._ph_list: tuple[list[str], list[dict[str, Any]]] | None = None  # (extras, their components)
        self._growth_memo: tuple[Any, Any, Any] | None = None  # (old, new, appended_strings(old, new))
        # (cid, raw text, list path) for which ``raw_allows_growth`` holds (checked, or carried over by
        # ``_take_grown_text`` when only plain ids that are no child field name were added).
        self._raw_ok: tuple[Any, str, tuple[Any, ...]] | None = None
        # (cid, component, path, field): ``sole_list_field`` of that component with its list at path marked.
        self._sole_memo: tuple[Any, Any, Any, str] | None = None
        # (open frame, cid, healed text, component, path): the open component's long id list at ``path``
        # is the innermost open container of its healed text (``_grown_text``).
        self._list_tail: tuple[list[Any], Any, str, Any, tuple[str, ...]] | None = None
        # (cid, shown component, path, text before, text after): its dump around its id list (``_list_dump``).
        self._splice: tuple[Any, Any, tuple[Any, ...], str, str] | None = None
        self._ph_shown: dict[Any, set[str]] = {}
        self._ph_ok: dict[Any, set[str]] = {}
        self._ph_bad: dict[Any, set[str]] = {}
        self._schema_valid = _schema_verdict(self._validator, self._v09)
        self._children_cache: tuple[Any, int, dict[str, bool]] = (None, 0, {})
        self._buf_version = 0
        self._fast_scan = True  # False: the general text and character loops, every close parsed
        # id(open frame) -> (frame, cid, healed text): its component as last accepted (``_same_as_shown``).
        self._healed: dict[int, tuple[list[Any], Any, str]] = {}
        # (array frame, id, exact text) of each component closed directly in an array of the current
        # top-level object, in order (``_element_texts``).
        self._elements: list[tuple[list[Any], Any, str]] = []

    # =================================================================================================
    # Text level.
    # =================================================================================================

    def process_chunk(self, chunk: str) -> list[ResponsePart]:
        """Feed the next piece of the response; return the parts that can be shown now."""
        if not isinstance(chunk, str):
            raise ParseError(f"A chunk must be text, not {type(chunk).__name__}")
        parts: list[ResponsePart] = []
        try:
            self._process(chunk, parts)
        except A2uiError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as exc:
            raise ParseError(f"Failed to parse JSON: {exc}") from exc
        for part in parts:
            if part.a2ui_json:
                part.a2ui_json = _dedupe_surface_updates(part.a2ui_json)
        return parts

    def _process(self, chunk: str, parts: list[ResponsePart]) -> None:
        if self._in_block and not self._text and "<" not in chunk and self._fast_scan:  # no tag in it: all JSON
            if chunk:
                self._scan_json(chunk, parts)
            return
        self._text += chunk
        while True:
            if not self._in_block:
                at = self._text.find(OPEN_TAG)
                if at >= 0:
                    if at:
                        parts.append(ResponsePart(text=self._text[:at]))
                    self._in_block = True
                    self._text = self._text[at + len(OPEN_TAG) :]
                    continue
                keep = _partial_tag_len(self._text, OPEN_TAG)
                if len(self._text) > keep:
                    cut = len(self._text) - keep
                    parts.append(ResponsePart(text=self._text[:cut]))
                    self._text = self._text[cut:]
                return
            at = self._text.find(CLOSE_TAG)
            if at >= 0:
                self._scan_json(self._text[:at], parts)
                if not self._found_json:
                    raise ParseError("Failed to parse JSON: No valid JSON object found in A2UI block.")
                self._in_block = False
                self._reset_json_state()
                self._text = self._text[at + len(CLOSE_TAG) :]
                continue
            keep = _partial_tag_len(self._text, CLOSE_TAG)
            if keep < len(self._text):
                cut = len(self._text) - keep
                fragment = self._text[:cut]
                self._text = self._text[cut:]
                self._scan_json(fragment, parts)
            return

    def _reset_json_state(self) -> None:
        self._epoch += 1
        self._buf = _Buffer()
        self._buf_version += 1
        self._stack = []
        self._in_top = False
        self._in_str = False
        self._esc = False
        self._str_start = -1
        self._str_escaped = False
        self._msg_types = []
        self._found_json = False
        self._reset_terms()
        self._sniff_due = True
        self._healed = {}
        self._elements = []

    # =================================================================================================
    # JSON level: one pass over the block text.
    # =================================================================================================

    def _reset_terms(self) -> None:
        self._quote_terms = {t: [] for t in ('"surfaceId"', '"root"', '"components"', f'"{self._dm_type}"')}
        self._colon_terms = {f'"{t}":': [] for t in self._types}
        self._kind_terms = [(t, self._colon_terms[f'"{t}":']) for t in self._types]
        self._colon_bare = frozenset(term[:-1] for term in self._colon_terms)
        names = {"id", "component", "root", "components", "surfaceId", self._dm_type, *self._types}
        self._run_re = _run_token(tuple(sorted(names)))
        self._values = {"surfaceId": [], "root": []}
        self._latest_dirty = {"surfaceId", "root"}
        self._latest_value: dict[str, str | None] = {}

    def _scan_json(self, s: str, parts: list[ResponsePart]) -> None:
        """The reference's character machine, run by jumping from one significant character to the next.

        A run of characters and the stop character after it are appended to the buffer in one piece
        when the machine would append each of them; textual facts are recorded as quotes and colons go by.
        """
        i, n = 0, len(s)
        opened_at = -1  # where in ``s`` the open string began (-1: in an earlier chunk)
        buf, stack = self._buf, self._stack
        append = buf.append
        fast = self._fast_scan
        while i < n:
            if fast and stack and self._in_top and not (self._esc or self._sniff_due or self._latest_dirty):
                i = self._scan_run(s, i, parts)
                buf, stack = self._buf, self._stack
                append = buf.append
                if i >= n:
                    break
            if not self._in_top:
                j = s.find("[", i)
                if j < 0:
                    break
                if not stack:
                    self._in_top = True
                stack.append(["[", buf.length, 0, None])
                append("[")
                i = j + 1
                continue
            in_str = self._in_str
            if in_str and self._esc:
                c = s[i]
                self._esc = False
                i += 1
                if stack:
                    append(c)
                    if c in _DELIMS and self._sniff_due:
                        self._sniff()
                continue
            if self._sniff_due:
                m = (_STOP_IN_DUE if in_str else _STOP_OUT_DUE).search(s, i)
            else:
                m = (_STOP_IN if in_str else _STOP_OUT).search(s, i)
            if m is None:
                if stack:
                    append(s[i:])
                break
            j = m.start()
            c = s[j]
            if stack:
                if c == "]" and not in_str and stack[-1][0] != "[":
                    if j > i:
                        append(s[i:j])
                    i = j + 1
                    if self._sniff_due:
                        self._sniff()
                    continue
                append(s[i : j + 1])
            elif c == "{" or c == "[":
                append(c)
            i = j + 1
            if in_str:
                if c == '"':
                    self._in_str = False
                    if stack:
                        if j == 0 or s[j - 1] in _TERM_ENDS:
                            self._on_quote(s, j)
                        if self._str_escaped or (buf.length - self._str_start - 2) in _KEY_LENGTHS:
                            self._on_string_closed(s[opened_at + 1 : j] if opened_at >= 0 else None)
                        if self._latest_dirty:  # a surfaceId / root value may have just completed
                            self._sniff_due = True
                elif c == "\\":
                    self._esc = True
                    self._str_escaped = True
                    continue
            elif c == '"':
                self._in_str = True
                self._esc = False
                self._str_escaped = False
                opened_at = j
                if stack:
                    self._str_start = buf.length - 1
                    if j == 0 or s[j - 1] in _TERM_ENDS:
                        self._on_quote(s, j)
                    if self._latest_dirty:
                        self._sniff_due = True
                else:
                    self._str_start = -1
            elif c == "{":
                if not stack:
                    self._msg_types = []
                    self._epoch += 1
                    self._sniff_due = True
                stack.append(["{", buf.length - 1, 0, None])
                continue
            elif c == "}":
                if stack:
                    self._close_object(parts)
                    buf, stack = self._buf, self._stack
                    append = buf.append
            elif c == "[":
                stack.append(["[", buf.length - 1, 0, None])
                continue
            elif c == "]":
                if stack:  # the top is "[" (checked above)
                    stack.pop()
                    if not stack:
                        self._in_top = False
            elif c == ":":
                if stack and (j == 0 or s[j - 1] == '"'):
                    self._on_colon(s, j)
            if stack and self._sniff_due:
                self._sniff()

        active = self._active
        if stack and buf.length:
            self._sniff_partial_component()
            self._sniff_partial_data_model(parts)
        if self._topology_dirty or (self._close_dirty and not self._is_settled()):
            self._yield_reachable(parts)
        self._topology_dirty = self._close_dirty = False
        # What ran at the chunk end may have changed the active message kind (``_active_for_components``
        # is the only state a sniff reads or writes that it touches): then re-sniff at the next delimiter.
        # Otherwise a sniff now would change nothing (it is idempotent), so none is forced on every chunk.
        if self._active != active:
            self._sniff_due = True

    def _scan_run(self, s: str, i: int, parts: list[ResponsePart]) -> int:
        """The machine's common case, a token at a time: outside strings, inside the top-level array, no
        sniff due and no ``surfaceId``/``root`` value undecided. Returns where the general loop resumes.

        A string with no escape that closes in this chunk is one token (the general loop stops at both
        its quotes), one left open at the chunk end is opened as the loop opens it, and the text is
        appended to the buffer once per run instead of once per stop. Anything else (an escape, a quote
        that may complete a tracked term, a ``]`` the machine drops, the top array closing) ends the run
        before that token, with everything before it appended, so the general loop handles it exactly as
        it would have.
        """
        buf, stack = self._buf, self._stack
        pend = i  # s[pend:] is not appended yet
        base = buf.length - pend  # the buffer position of s[k] is base + k
        quote_terms = self._quote_terms
        colon_bare = self._colon_bare
        key_bits = self._key_bits
        str_at = -1  # where the last noted string opened (the loop's ``_str_start``, set on the way out)
        quiet_colon = -1  # a colon here follows the string closed below: no message kind (see there)
        if self._in_str:  # a string opened in an earlier chunk: its closing quote as the loop takes it
            k = s.find('"', i)
            if (
                k < 0
                or k == 0
                or s[k - 1] in _TERM_ENDS
                or self._str_escaped
                or (base + k - 1 - self._str_start) in _KEY_LENGTHS
                or "\\" in s[i:k]
            ):
                return i  # no closing quote, or one that may end a term or a key that matters
            # A colon right after it needs no look-up: the quoted text before that colon is this string
            # (no quote inside it, no escape) or, when longer than the look-up window, nothing, and a
            # message kind's length is one of ``_KEY_LENGTHS``, which this string's is not.
            self._in_str = False
            i = k + 1
            quiet_colon = i
        try:
            run_match = self._run_re.match  # anchored at each token's end (a search could start in a string)
            while True:
                m = run_match(s, i)
                if m is None:  # nothing but what the machine passes over
                    if pend < len(s):
                        buf.append(s[pend:])
                    return len(s)
                j, e = m.span(1)
                i = e
                c = s[j]
                if c == '"':
                    if j == 0 or s[j - 1] in _TERM_ENDS:
                        break  # an opening quote that may end a tracked term
                    if e - j == 1:
                        if "\\" in s[e:]:
                            break  # a string with an escape
                        str_at = base + j  # a string still open at the chunk end: opened as the loop does
                        self._in_str = True
                        break
                    q = e - 1 if s[e - 1] == ":" else e  # the token may end with the colon of a key
                    token = s[j:q]
                    if token in quote_terms:
                        break  # a quote that ends a tracked term
                    if q - j - 2 in _KEY_LENGTHS:
                        top = stack[-1]
                        if top[0] == "{":
                            top[2] |= key_bits.get(token[1:-1], 0)
                    str_at = base + j
                    if q != e and token in colon_bare:  # a message kind written as a key
                        buf.append(s[pend:e])
                        pend = e
                        self._on_colon(s, q)
                        if self._sniff_due:
                            self._sniff()
                            if self._latest_dirty:
                                return e
                elif c == ":":
                    if (j == 0 or s[j - 1] == '"') and j != quiet_colon:
                        # After a key closed before the run (a key in the run takes its colon with it).
                        buf.append(s[pend:e])
                        pend = e
                        self._on_colon(s, j)
                        if self._sniff_due:
                            self._sniff()
                            if self._latest_dirty:
                                return e
                elif c == "{" or c == "[":
                    stack.append([c, base + j, 0, None])
                elif c == "]":
                    if stack[-1][0] != "[":
                        break
                    stack.pop()
                    if not stack:
                        self._in_top = False
                        buf.append(s[pend:e])
                        return e
                else:  # "}"
                    flags = stack[-1][2]
                    if (
                        flags & _F_ID_COMPONENT != _F_ID_COMPONENT
                        and not flags & _F_PROTOCOL
                        and (len(stack) > 2 or (len(stack) == 2 and stack[0][0] != "["))
                        and self._found_json
                    ):
                        # What ``_close_object`` returns early on (the run is inside the top array):
                        # not a component, not a message, not top level. Such a frame has no healed
                        # entry (those need both key flags), so only the pop is left.
                        stack.pop()
                        continue
                    buf.append(s[pend:e])
                    pend = e
                    self._close_object(parts)
                    buf, stack = self._buf, self._stack
                    base = buf.length - pend
                    if stack and self._sniff_due:
                        self._sniff()
                    if not stack or not self._in_top or self._sniff_due or self._latest_dirty:
                        return e
            if self._in_str:
                buf.append(s[pend:])
                return len(s)
            if pend < j:
                buf.append(s[pend:j])
            return j
        finally:
            if str_at >= 0:
                self._str_start = str_at
                self._str_escaped = False

    # ---- textual facts ------------------------------------------------------------------------------

    def _on_quote(self, s: str, j: int) -> None:
        """A quote (``s[j]``) was appended: record terms ending here (``"surfaceId"``, ``"root"`` ...).

        The buffer ends with ``s[:j + 1]`` as far back as the current chunk's appended run goes; near the
        chunk start the buffer's own tail is used. A term holds exactly two quotes, at its ends, so the
        only candidate is the text from the previous quote: one dictionary look-up for all terms.
        """
        if j >= 20:
            term = _quoted_before(s, j + 1, 20)
        else:
            tail = self._buf.tail(20)
            term = _quoted_before(tail, len(tail), 20)
        found = self._quote_terms.get(term) if term else None
        if found is not None:
            pos = self._buf.length - len(term)
            found.append(pos)
            key = term[1:-1]
            values = self._values.get(key)
            if values is not None:
                values.append(_Value(pos))
                self._latest_dirty.add(key)

    def _on_colon(self, s: str, j: int) -> None:
        """A colon right after a quote (``s[j]``) was appended: record a message kind written as a key."""
        if j >= 22:
            term = _quoted_before(s, j, 22)
        else:
            tail = self._buf.tail(22)
            term = _quoted_before(tail, len(tail) - 1, 22)
        found = self._colon_terms.get(term + ":") if term else None
        if found is not None:
            found.append(self._buf.length - len(term) - 1)
            self._sniff_due = True

    def _on_string_closed(self, raw: str | None) -> None:
        """Note the keys that matter (``id``, ``component``, the data-model kind) in the open object.

        ``raw``: the string's characters when it opened in the current chunk (else read from the buffer).
        """
        top = self._stack[-1]
        if top[0] != "{" or self._str_start < 0:
            return
        raw_len = self._buf.length - self._str_start - 2
        if not self._str_escaped and raw_len not in _KEY_LENGTHS:
            return
        if raw_len < 0 or raw_len > 120:
            return
        if raw is None:
            raw = self._buf.tail(raw_len + 1)[:-1]
        text = raw
        if self._str_escaped:
            try:
                text = json.loads('"' + raw + '"')
            except ValueError:
                return
        top[2] |= self._key_bits.get(text, 0)

    def _truncate(self, pos: int) -> None:
        """The buffer lost everything from ``pos`` (a complete top-level object was consumed)."""
        self._buf.truncate(pos)
        self._buf_version += 1
        length = self._buf.length
        for table in (self._quote_terms, self._colon_terms):
            for term, found in table.items():
                while found and found[-1] + len(term) > length:
                    found.pop()
        for key, values in self._values.items():
            size = len(key) + 2
            while values and values[-1].pos + size > length:
                values.pop()
            for v in reversed(values):
                if v.end <= length:
                    break
                v.state, v.value = 0, None
        self._latest_dirty.update(self._values)
        self._sniff_due = True

    def _reindex(self) -> None:
        """Rebuild the textual index from scratch (after the buffer lost a prefix)."""
        text = self._buf.text()
        self._reset_terms()
        for table in (self._quote_terms, self._colon_terms):
            for term, found in table.items():
                at = text.find(term)
                while at >= 0:
                    found.append(at)
                    at = text.find(term, at + 1)
        for key, values in self._values.items():
            values.extend(_Value(p) for p in self._quote_terms[f'"{key}"'])
        self._sniff_due = True

    def _latest(self, key: str) -> str | None:
        """The value of the last ``"<key>": "<value>"`` in the buffer (the reference's backward search).

        Cached until a new occurrence appears, the buffer is cut, or an occurrence is still undecided.
        """
        if key not in self._latest_dirty:
            return self._latest_value.get(key)
        exact, partial = _VALUE_RES[key]
        found = None
        undecided = False
        for v in reversed(self._values[key]):
            if v.state == 0:
                text = self._buf.from_(v.pos)
                m = exact.match(text)
                if m:
                    v.state, v.value, v.end = 1, m.group(1), v.pos + m.end()
                elif not partial.match(text):
                    v.state, v.end = 2, self._buf.length
                else:
                    undecided = True
            if v.state == 1:
                found = v.value
                break
        self._latest_value[key] = found
        if not undecided:
            self._latest_dirty.discard(key)
        return found

    def _sniff(self) -> None:
        """Refresh surface id, root id and message kinds from the buffer (only when something changed)."""
        if not self._sniff_due:
            return
        self._sniff_due = False
        self._epoch += 1
        dirty = self._latest_dirty
        if dirty:
            self._set_surface(self._latest("surfaceId"))
            root = self._latest("root")
        else:  # what _latest would return from its cache
            self._set_surface(self._latest_value.get("surfaceId"))
            root = self._latest_value.get("root")
        if root is not None:
            self._set_root(root)
        msg_types = self._msg_types
        for kind, found in self._kind_terms:
            if found:
                if kind not in msg_types:
                    msg_types.append(kind)
                if kind in _ACTIVE_SETTERS:
                    self._active = kind

    def _children_open(self, field: str) -> bool:
        """Whether the text after the last ``"<field>"`` opens a list before closing one."""
        key, _, cache = self._children_cache
        version = (self._buf.length, self._buf_version)
        if version != key:
            cache = {}
            self._children_cache = (version, 0, cache)
        if field not in cache:
            text = self._buf.text()
            term = f'"{field}"'
            result = False
            if term in text:
                after = text.split(term)[-1]
                result = "[" in after and "]" not in after.split("[")[0]
            cache[field] = result
        return cache[field]

    # ---- surface / root / message kinds -------------------------------------------------------------

    def _set_surface(self, value: Any) -> None:
        self._epoch += 1
        self._surface = value
        if value is not None and self._unbound_root is not None:
            self._root_ids[value] = self._unbound_root
            self._unbound_root = None

    def _root(self) -> Any:
        if self._surface:
            return self._root_ids.get(self._surface, self._default_root)
        return self._unbound_root if self._unbound_root is not None else self._default_root

    def _set_root(self, value: Any) -> None:
        self._epoch += 1
        if self._surface:
            if value is not None:
                self._root_ids[self._surface] = value
            else:
                self._root_ids.pop(self._surface, None)
        else:
            self._unbound_root = value

    def _add_msg_type(self, kind: str) -> None:
        self._epoch += 1
        if kind not in self._msg_types:
            self._msg_types.append(kind)
        if kind in _ACTIVE_SETTERS:
            self._active = kind

    def _active_for_components(self) -> str | None:
        if self._active:
            return self._active
        wanted = (_UC, _CS) if self._v09 else (_SU, _BR)
        for kind in self._msg_types:
            if kind in wanted:
                self._active = kind
                return kind
        return self._msg_types[0] if self._msg_types else None

    # ---- a closing brace ----------------------------------------------------------------------------

    def _close_object(self, parts: list[ResponsePart]) -> None:
        stack, buf = self._stack, self._buf
        frame = stack.pop()
        start, flags = frame[1], frame[2]
        healed = self._healed.pop(id(frame), None) if self._healed else None
        if (
            self._found_json
            and flags & _F_ID_COMPONENT != _F_ID_COMPONENT
            and not (self._in_top and flags & _F_PROTOCOL)
            and stack
            and not (self._in_top and len(stack) == 1 and stack[0][0] == "[")
        ):
            # Parsing it could change nothing: not a component, not a message, not top level. Nor did
            # anything a sniff reads change, so no re-sniff is due either (a sniff is idempotent).
            return
        text = buf.from_(start)
        if not text.startswith("{"):
            self._sniff_due = True
            return
        if healed is not None and healed[0] is frame and self._same_as_shown(healed[1], healed[2], text):
            # The component as it was last healed, only closed: parsing it would give what is seen. No
            # re-sniff either, unless a surfaceId / root value is undecided (the brace may decide it):
            # nothing else a sniff reads or writes changed (a cut-off buffer forces one below).
            if self._latest_dirty:
                self._sniff_due = True
            self._found_json = True
            self._raw[healed[1]] = text
            if stack and stack[-1][0] == "[":
                self._elements.append((stack[-1], healed[1], text))
            if stack and not (self._in_top and len(stack) == 1):
                self._close_dirty = True  # changed: the raw text (same parse) and the buffer
            else:  # a top-level object: the buffer is cut below, which may change what a sniff finds
                self._topology_dirty = True
        else:
            self._sniff_due = True
            try:
                obj = _loads(text)
            except json.JSONDecodeError:
                return
            if not isinstance(obj, dict):
                return
            self._found_json = True
            is_protocol = self._in_top and self._is_protocol(obj)
            is_comp = obj.get("id") and obj.get("component")
            is_top = not stack or (self._in_top and len(stack) == 1 and stack[0][0] == "[")
            if is_comp:
                self._handle_partial_component(obj, text)
                if stack and stack[-1][0] == "[":
                    self._elements.append((stack[-1], obj["id"], text))
            elif is_top or is_protocol:
                if not self._handle_complete(obj, parts, (start, text) if is_top else None):
                    self._yield_messages([obj], parts)
        if not stack or (self._in_top and len(stack) == 1):
            self._elements.clear()
            if len(stack) == 1 and stack[0][0] == "[":
                # The consumed object is the buffer's tail: cut it off.
                if start >= 0:
                    self._truncate(start)
                else:
                    full = buf.text()
                    buf.set(full[:start] + full[start + len(text) :])
                    self._buf_version += 1
                    self._reindex()
            else:
                full = buf.text()
                buf.set(full[len(text) :])
                self._buf_version += 1
                shift = len(text)
                for frame in stack:
                    frame[1] -= shift
                    frame[3] = None
                self._reindex()

    def _same_as_shown(self, cid: Any, healed: str, text: str) -> bool:
        """Whether the complete text of a component is, token for token, the healed text its seen version
        was parsed from (``healed`` plus only whitespace before the same closing brackets).

        Then ``json.loads(text)`` is that version again (same keys in the same order, same types), so
        handling it would only store ``text`` as its raw form: the parse, the checks and the two dumps
        ``_set_seen`` compares are skipped. ``healed`` ends with closing brackets and is valid JSON, so
        what precedes them is outside any string, and the whitespace after it is insignificant. NaN
        (unequal to itself) and nesting deep enough to stop an encoder keep the general path.
        """
        if self._raw.get(cid) != healed:
            return False
        head = healed.rstrip("}]")
        return (
            text.startswith(head)
            and text[len(head) :].translate(_NO_SPACE) == healed[len(head) :]
            and "NaN" not in head
            and "Infinity" not in head
            and head.count("{") + head.count("[") < 100
        )

    def _is_protocol(self, obj: dict[str, Any]) -> bool:
        kinds = _V09_TYPES if self._v09 else _V08_TYPES
        return any(k in obj for k in kinds)

    # =================================================================================================
    # Message level.
    # =================================================================================================

    def _emit(self, parts: list[ResponsePart], message: Any) -> None:
        if parts and parts[-1].a2ui_json is None:
            parts[-1].a2ui_json = [message]
        elif parts and isinstance(parts[-1].a2ui_json, list):
            parts[-1].a2ui_json.append(message)
        else:
            parts.append(ResponsePart(a2ui_json=[message]))

    def _yield_messages(self, messages: list[Any], parts: list[ResponsePart], strict: bool = True) -> None:
        for message in messages:
            if not self._dedupe_data_model(message, strict):
                continue
            try:
                self._validator.validate(message, strict_integrity=strict)
            except ValueError:
                if strict:
                    raise
                continue
            self._emit(parts, message)

    def _dedupe_data_model(self, message: Any, strict: bool) -> bool:
        """Skip a complete data-model update that changes nothing already shown."""
        if self._v09:
            if _UDM in message:
                udm = message[_UDM]
                if isinstance(udm, dict):
                    fresh = any(
                        k not in ("surfaceId", "root") and _get(self._yielded_dm, k) != v for k, v in udm.items()
                    )
                    if not fresh and strict:
                        return False
                    for k, v in udm.items():
                        if k not in ("surfaceId", "root"):
                            _put(self._yielded_dm, k, v)
            return True
        if _DMU in message:
            dm = message[_DMU]
            raw = dm.get("contents", {})
            contents: dict[Any, Any] = {}
            if isinstance(raw, list):
                for entry in raw:
                    if isinstance(entry, dict) and "key" in entry:
                        key = entry["key"]
                        val = (
                            entry.get("valueString")
                            or entry.get("valueNumber")
                            or entry.get("valueBoolean")
                            or entry.get("valueMap")
                        )
                        if key and val is not None:
                            _put(contents, key, val)
            elif isinstance(raw, dict):
                contents = raw
            if contents:
                fresh = any(_get(self._yielded_dm, k) != v for k, v in contents.items())
                if not fresh and strict:
                    return False
                for k, v in contents.items():
                    _put(self._yielded_dm, k, v)
        return True

    def _handle_partial_component(self, comp: dict[str, Any], text: str | None = None) -> bool:
        """Take ``comp`` as the latest version of its id if it is complete enough (True when taken)."""
        cid = comp.get("id")
        if not cid:
            return False
        if not acceptable_partial(comp, self._required, text):
            return False
        taken = self._set_seen(cid, comp, text)
        self._topology_dirty = True
        return taken

    def _set_seen(self, cid: Any, comp: Any, text: str | None = None) -> bool:
        """``comp`` (parsed from ``text`` when given) is now the latest version of component ``cid``
        (False: ``cid`` cannot be an id)."""
        try:
            hash(cid)
        except TypeError:
            return False
        raw = text if text is not None else _dump(comp)
        known = cid in self._seen
        if known:
            if self._raw.get(cid) == raw:
                self._seen[cid] = comp
                self._epoch += 1
                return True
            old = self._seen[cid]
            # Same content written differently (a healed fragment, then the complete object): nothing
            # to redo. JSON-equal only: == alone would take 1 for 1.0 or True. Without ``text``, ``raw``
            # already is ``_dump(comp)`` (a complete update re-sets all its components: one dump each).
            if old == comp and _dump(old) == (raw if text is None else _dump(comp)):
                self._seen[cid] = comp
                self._raw[cid] = raw
                self._epoch += 1
                return True
        only = self._grown_refs(cid, self._seen[cid], comp) if known else None
        self._seen[cid] = comp
        self._raw[cid] = raw
        self._epoch += 1
        self._stale.add(cid)
        self._topo.update(cid, comp, self._seen, only)
        if not known:
            for waiting in self._waiting.pop(cid, ()):
                self._patches.setdefault(waiting, []).append(cid)
        return True

    def _grown_refs(self, cid: Any, old: Any, comp: Any) -> tuple[str, list[Any]] | None:
        """(field, ids) when ``comp`` is ``old`` with ids appended to a long list that holds all its
        references: the topology then takes the list as is instead of walking the component."""
        if len(self._topo.refs.get(cid, ())) < GROWTH_MIN:
            return None
        memo = self._growth_memo  # held objects, never mutated: identity means the same pair
        if memo is not None and memo[0] is old and memo[1] is comp:
            growth = memo[2]  # found from the text (``_take_grown_text``)
        else:
            growth = appended_strings(old, comp)
            # The shown form is then usually grown from the same pair (``_reprocess``): kept for it.
            self._growth_memo = (old, comp, growth)
        if growth is None:
            return None
        path = growth[0]
        sole = self._sole_memo
        if sole is not None and sole[0] == cid and sole[1] is old and sole[2] == path:
            # ``comp`` is ``old`` but for the list at ``path``, which both probes mark: the same answer.
            field: str | None = sole[3]
        else:
            field = self._topo.sole_list_field(with_list(comp, path, [_MARKER]), _MARKER)
        if field is None:
            return None
        self._sole_memo = (cid, comp, path, field)
        return field, list_at(comp, path)

    def _handle_complete(
        self, obj: dict[str, Any], parts: list[ResponsePart], src: tuple[int, str] | None = None
    ) -> bool:
        """A complete message (``src``: the buffer position and exact text of a top-level one)."""
        self._epoch += 1
        return self._complete_v09(obj, parts, src) if self._v09 else self._complete_v08(obj, parts, src)

    def _set_components(self, comps: Any, src: tuple[int, str] | None) -> None:
        """Take the components of a complete update as the latest versions of their ids."""
        texts = self._element_texts(comps, src)
        for i, comp in enumerate(comps):
            if isinstance(comp, dict) and "id" in comp:
                self._set_seen(comp["id"], comp, texts[i] if texts is not None else None)

    def _element_texts(self, comps: Any, src: tuple[int, str] | None) -> list[str] | None:
        """The exact text each of the ``components`` of a complete top-level message was parsed from, when
        that is proven (None otherwise): then re-setting a component already seen from that very text is
        a string comparison (``_set_seen``) instead of two dumps.

        Proof: the message's text holds ``"components"`` once and no ``\\u`` escape (so no other spelling
        of that key: its letters have no short escape), so the array right after it is the one
        ``json.loads`` took. Every component closed directly in that array was recorded in order
        (``_elements``); as many as the list holds, with the same ids, are all its elements in order.
        """
        if src is None or type(comps) is not list or not comps or not self._elements:
            return None
        start, text = src
        if start < 0 or text.count('"components"') != 1 or "\\u" in text:
            return None
        m = _ARRAY_AFTER_KEY.match(text, text.index('"components"') + 12)
        if m is None:
            return None
        pos = start + m.end() - 1  # the array's buffer position, where its frame opened
        found = [(cid, t) for frame, cid, t in self._elements if frame[1] == pos and frame[0] == "["]
        if len(found) != len(comps):
            return None
        for comp, (cid, _) in zip(comps, found):
            if type(comp) is not dict or "id" not in comp or comp["id"] != cid:
                return None
        return [t for _, t in found]

    def _complete_v08(
        self, obj: dict[str, Any], parts: list[ResponsePart], src: tuple[int, str] | None = None
    ) -> bool:
        self._validator.validate(obj, strict_integrity=False)
        surface = obj.get("surfaceId", self._surface)
        if _SU in obj:
            val = obj[_SU]
            if isinstance(val, dict):
                surface = val.get("surfaceId") or surface
        elif _BR in obj:
            val = obj[_BR]
            if isinstance(val, dict):
                surface = val.get("surfaceId") or surface
        elif _DS in obj:
            val = obj[_DS]
            if isinstance(val, str):
                surface = val
            elif isinstance(val, dict):
                surface = val.get("surfaceId") or surface
        self._set_surface(surface)
        sid = self._surface or "unknown"

        if _DS in obj and (sid in self._surfaces or self._buffered_start):
            self._delete_surface(sid)
        if sid in self._deleted:
            return True
        if (_SU in obj or _DS in obj) and sid not in self._surfaces and not self._buffered_start:
            self._pending_msgs.setdefault(sid, []).append(obj)
            return True
        if _BR in obj:
            start = obj[_BR]
            if isinstance(start, dict):
                self._set_surface(start.get("surfaceId", self._surface))
            self._set_root(start.get("root", self._root() or "root"))
            self._buffered_start = obj
            if sid not in self._started:
                self._yield_messages([obj], parts)
                self._started.add(sid)
                self._surfaces.add(sid)
                self._buffered_start = None
            if sid in self._pending_msgs:
                for pending in self._pending_msgs.pop(sid):
                    self._complete_v08(pending, parts)
            self._yield_reachable(parts)
            return True
        if _SU in obj:
            self._add_msg_type(_SU)
            self._set_components(obj[_SU].get("components", []), src)
            self._yield_reachable(parts, check_root=True)
            return True
        if _DMU in obj:
            self._add_msg_type(_DMU)
            self._yield_messages([obj], parts)
            self._yield_reachable(parts)
            return True
        self._yield_messages([obj], parts)
        return True

    def _complete_v09(
        self, obj: dict[str, Any], parts: list[ResponsePart], src: tuple[int, str] | None = None
    ) -> bool:
        self._validator.validate(obj, strict_integrity=False)
        surface = obj.get("surfaceId", self._surface)
        if _UC in obj:
            val = obj[_UC]
            if isinstance(val, dict):
                surface = val.get("surfaceId") or surface
        elif _CS in obj:
            val = obj[_CS]
            if isinstance(val, dict):
                surface = val.get("surfaceId") or surface
        self._set_surface(surface)
        sid = self._surface or "unknown"

        if _CS in obj:
            val = obj[_CS]
            if isinstance(val, dict):
                self._set_root(val.get("root", self._root() or "root"))
            self._buffered_start = obj
            if sid not in self._started:
                self._yield_messages([obj], parts)
                self._started.add(sid)
                self._surfaces.add(sid)
                self._buffered_start = None
            self._pending_msgs.pop(sid, None)
            self._yield_reachable(parts)
            return True
        if _UC in obj:
            self._add_msg_type(_UC)
            update = obj[_UC]
            self._set_root(update.get("root", self._root() or "root"))
            self._set_components(update.get("components", []), src)
            self._yield_reachable(parts, check_root=True)
            return True
        if _DS in obj:
            if sid not in self._started:
                self._pending_msgs.setdefault(sid, []).append(obj)
                return True
            self._add_msg_type(_DS)
            self._yield_messages([obj], parts)
            return True
        if _UDM in obj:
            self._add_msg_type(_UDM)
            self._yield_messages([obj], parts)
            return True
        return False

    def _delete_surface(self, sid: Any) -> None:
        self._epoch += 1
        self._pending_msgs.pop(sid, None)
        self._yielded_ids.pop(sid, None)
        self._contents.pop(sid, None)
        self._bad.pop(sid, None)
        self._bad_known.discard(sid)
        self._ph_shown.pop(sid, None)
        self._ph_synced = None
        if self._cmp_sid == sid:
            self._cmp_sid = None
        self._surfaces.discard(sid)
        self._started.discard(sid)
        self._deleted.add(sid)

    # ---- partial (still streaming) objects ----------------------------------------------------------

    def _open_objects(self, flags: int) -> list[tuple[str, HealScan, list[Any]]]:
        """Open objects (innermost first) that directly hold all keys in ``flags``: text, scan, frame.

        Key flags are only ever set on ``{`` frames (the scanners note keys in objects only).
        """
        found = []
        from_ = self._buf.from_
        for frame in reversed(self._stack):
            if frame[2] & flags == flags:
                raw = from_(frame[1])
                if raw:
                    if frame[3] is None:
                        frame[3] = HealScan()
                    found.append((raw, frame[3], frame))
        return found

    def _sniff_partial_component(self) -> None:
        if not self._quote_terms['"components"']:
            return
        for raw, scan, frame in self._open_objects(_F_ID_COMPONENT):
            try:
                healed = heal_fragment(raw, scan)
                if not healed:
                    continue
                tail = self._list_tail
                if tail is not None and tail[0] is frame and self._take_grown_text(tail, healed):
                    continue
                if _surely_invalid(healed):  # json.loads would only raise
                    continue
                obj = _loads(healed)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and obj.get("id") and obj.get("component"):
                body = obj["component"]
                if isinstance(body, str) or (isinstance(body, dict) and body):
                    cid = obj["id"]
                    before = self._healed.get(id(frame)) if self._fast_scan else None
                    try:
                        raw_before = _get(self._raw, cid)
                        shown = self._handle_partial_component(obj, healed)
                    except (ValueError, TypeError):
                        continue
                    if shown and self._fast_scan:
                        # For the close of this object (``_same_as_shown``): it was accepted as this.
                        self._healed[id(frame)] = (frame, cid, healed)
                        self._note_list_tail(frame, cid, obj, healed, before, raw_before)

    def _note_list_tail(
        self, frame: list[Any], cid: Any, comp: Any, healed: str, before: Any, raw_before: str | None
    ) -> None:
        """Remember where the open component's long id list is, when that is proven (``_grown_text``).

        ``before``: the healed text this frame was accepted as last time, when its version was the seen
        one (``raw_before``). If the text only grew string items at the innermost open list since, and
        the parse grew exactly one list (``appended_strings``, found by ``_grown_refs``), that list is
        the one the text grew: the innermost open container, at the path found.
        """
        self._list_tail = None
        memo = self._growth_memo
        if (
            before is None
            or before[1] != cid
            or before[2] != raw_before
            or memo is None
            or memo[1] is not comp
            or memo[2] is None
            or self._seen.get(cid) is not comp
            or _grown_text(before[2], healed) is None
        ):
            return
        self._list_tail = (frame, cid, healed, comp, memo[2][0])

    def _take_grown_text(self, tail: tuple[list[Any], Any, str, Any, tuple[str, ...]], healed: str) -> bool:
        """The open component's healed text only grew its long id list (see ``_grown_text``): take the
        new version without parsing it (True), as the general path would take its parse.

        The new version is the old one with that list's items replaced from its last one on, which is
        exactly what ``json.loads`` gives for the new text (the text before is the same, the list is the
        innermost open container). The old version was accepted, and the change adds no object, no
        property and no type: it is acceptable too. Its growth is handed on (``_growth_memo``).
        """
        frame, cid, before, old, path = tail
        if not self._fast_scan or self._seen.get(cid) is not old or self._raw.get(cid) != before:
            self._list_tail = None
            return False
        items = _grown_text(before, healed)
        if items is None:
            self._list_tail = None
            return False
        old_list = list_at(old, path)
        if type(old_list) is not list or not old_list or old_list[-1] != items[-1]:
            self._list_tail = None
            return False
        plain_names = GROWTH_NAMES.isdisjoint(items)  # none of them, nor the replaced one, is a field name
        del items[-1]  # the replaced last item
        self._list_tail = None
        if items == [old_list[-1]]:  # the same text: nothing new
            comp = old
        else:
            comp = with_list(old, path, old_list[:-1] + items)
            keep = len(old_list) if items[0] == old_list[-1] else len(old_list) - 1
            self._growth_memo = (old, comp, (path, keep))
        try:
            self._set_seen(cid, comp, healed)
        except (ValueError, TypeError):  # as the general path takes it: nothing more for this object
            return True
        # String ids put in a list add no depth, no call and no path: the limits verdict carries over.
        limits = self._limits.get(before)
        if limits is not None:
            self._limits[healed] = limits
        ok = self._raw_ok
        if plain_names and ok is not None and ok[0] == cid and ok[2] == path and ok[1] == before:
            self._raw_ok = (cid, healed, path)
        self._topology_dirty = True
        self._healed[id(frame)] = (frame, cid, healed)
        self._list_tail = (frame, cid, healed, comp, path)
        return True

    def _parse_healed(self, raw: str, scan: HealScan) -> Any:
        """Heal and parse; on failure retry after cutting at the last comma, as the reference does."""
        try:
            return json.loads(heal_fragment(raw, scan))
        except json.JSONDecodeError:
            pass
        trimmed = raw
        while "," in trimmed:
            trimmed = trimmed.rsplit(",", 1)[0]
            try:
                fixed = heal_fragment(trimmed)
                if fixed:
                    return json.loads(fixed)
            except json.JSONDecodeError:
                continue
        return None

    def _sniff_partial_data_model(self, parts: list[ResponsePart]) -> None:
        if not self._quote_terms[self._dm_term]:
            return
        for raw, scan, _ in self._open_objects(_F_DM):
            obj = self._parse_healed(raw, scan)
            if not obj or not isinstance(obj, dict) or self._dm_type not in obj:
                continue
            if self._v09:
                self._partial_dm_v09(obj[_UDM], parts)
            else:
                self._partial_dm_v08(obj[_DMU], parts)

    def _partial_dm_v08(self, dm: Any, parts: list[ResponsePart]) -> None:
        if not isinstance(dm, dict) or "contents" not in dm:
            return
        raw_contents = dm["contents"]
        contents = _contents_to_dict(raw_contents)
        if not contents:
            return
        delta = {k: v for k, v in contents.items() if _get(self._yielded_dm, k) != v}
        if not delta:
            return
        sid = dm.get("surfaceId") or self._surface or "default"
        if isinstance(raw_contents, list):
            latest: list[Any] = []
            keys: set[Any] = set()
            for entry in reversed(raw_contents):
                if not isinstance(entry, dict):
                    continue
                k = entry.get("key")
                if k and _has(contents, k) and not _has(keys, k):
                    latest.insert(0, entry)
                    keys.add(k)
            entries: Any = _prune_entries(latest)
        else:
            entries = delta
        payload: dict[str, Any] = {"surfaceId": sid, "contents": entries}
        if "path" in dm:
            payload["path"] = dm["path"]
        self._yield_messages([{_DMU: payload}], parts, strict=False)
        for k, v in contents.items():
            _put(self._yielded_dm, k, v)

    def _partial_dm_v09(self, dm: Any, parts: list[ResponsePart]) -> None:
        if not isinstance(dm, dict) or "value" not in dm:
            return
        value = dm["value"]
        if not isinstance(value, dict):
            return
        delta = {k: v for k, v in value.items() if _get(self._yielded_dm, k) != v}
        if not delta:
            return
        sid = dm.get("surfaceId") or self._surface or "default"
        message = {"version": "v0.9", _UDM: {"surfaceId": sid, "value": delta}}
        self._yield_messages([message], parts, strict=False)
        for k, v in delta.items():
            _put(self._yielded_dm, k, v)

    # ---- the synthesized component update -----------------------------------------------------------

    def _is_settled(self) -> bool:
        """A run of ``_yield_reachable`` now would change nothing and yield nothing: its last run ended
        cleanly and none of its inputs changed since (``_epoch``). Components shown from the buffer's
        state (open child lists, ``_bufdep``) and ids that look like placeholders (``_loading_ids``: a
        run is not idempotent then) always run."""
        return self._settled == self._epoch and not self._bufdep and self._loading_ids == 0

    def _yield_reachable(self, parts: list[ResponsePart], check_root: bool = False) -> None:
        # ``_settled`` is set where the run ends cleanly (no error caught or raised).
        self._settled = -1
        active = self._active_for_components()
        root = self._root()
        if not root or not active:
            self._settled = self._epoch
            return
        sid = self._surface
        if not sid:
            self._settled = self._epoch
            return
        if sid not in self._surfaces and not self._buffered_start:
            self._settled = self._epoch
            return
        try:
            if check_root and not _has(self._seen, root):
                raise IntegrityError(f"No root component (id='{root}') found in {active}")
            reach = self._topo.analyze(root, self._seen)
            if check_root and not reach:
                raise IntegrityError(f"No root component (id='{root}') found in {active}")
            extras = self._refresh(reach)
            if sid in self._deleted:
                self._settled = self._epoch
                return
            yielded = self._yielded_ids.get(sid, set())
            shown_now = self._components()  # the live list: copied below only when an update is made
            dup = bool(extras) and self._loading_ids > 0 and not reach.isdisjoint(extras)
            changed_real, changed_ph = self._changed(sid, reach, extras, dup)
            covered = self._covered
            since = None  # the ids added to reach since it was covered, when known
            if covered is not None and covered[0] is yielded and covered[1] is reach and covered[2] == len(reach):
                fresh = False  # reach only grows in place (a rebuild is a new set): nothing new since
            else:
                grown = self._topo.grown
                if (
                    self._fast_scan
                    and covered is not None
                    and covered[0] is yielded
                    and covered[1] is reach
                    and covered[3] is grown
                ):
                    since = grown[covered[4] :]  # reach is what it was (all in yielded) plus these
                    fresh = not yielded.issuperset(since)
                else:
                    fresh = not reach <= yielded
                if not fresh:
                    self._covered = (yielded, reach, len(reach), grown, len(grown))
            if not fresh and not changed_real and not changed_ph:
                self._settled = self._epoch
                return
            components = list(shown_now)
            if self._buffered_start and sid not in self._started:
                self._yield_messages([self._buffered_start], parts, strict=True)
                self._started.add(sid)
                self._surfaces.add(sid)
            if extras:
                # The placeholder components of this very list (lists are replaced, never changed in
                # place, and each id has one fixed placeholder object): reused while only a real
                # component changes, i.e. at most chunks, instead of one look-up per placeholder.
                cached = self._ph_list
                if cached is None or cached[0] is not extras:
                    d = self._ph_derived
                    if cached is not None and d is not None and d[0] is extras and d[1] is cached[0]:
                        # Derived from the cached list: the same deletions and appends on its components.
                        comps = cached[1][:]
                        for at in d[3]:
                            del comps[at]
                        comps += map(self._ph_comp.__getitem__, d[2])
                    else:
                        comps = list(map(self._ph_comp.__getitem__, extras))
                    cached = self._ph_list = (extras, comps)
                components.extend(cached[1])
            if self._v09:
                message: dict[str, Any] = {"version": "v0.9", _UC: {"components": components, "surfaceId": sid}}
            else:
                message = {_SU: {"surfaceId": sid, "components": components}}
            if self._partial_ok(sid, message, reach, extras, changed_real, dup):
                self._emit(parts, message)
            if fresh:
                stored = self._yielded_ids.setdefault(sid, set())
                stored.update(since if since is not None and stored is yielded else reach)
                grown = self._topo.grown
                self._covered = (stored, reach, len(reach), grown, len(grown))
            contents = self._contents.setdefault(sid, {})
            shown = self._ph_shown.setdefault(sid, set())
            for cid in changed_real:
                contents[cid] = self._proc[cid][1]
                if cid in shown:
                    shown.discard(cid)
                    self._ph_synced = None
            for pid in changed_ph:
                contents[pid] = self._ph_dump[pid]
                shown.add(pid)
            if not dup:
                self._ph_synced = (sid, extras)
            self._settled = self._epoch
        except ValueError as exc:
            text = str(exc)
            if "Circular" in text or "Self-reference" in text or "recursion" in text.lower() or check_root:
                raise

    def _since(self, extras: list[str], base: list[str]) -> list[str]:
        """The ids of placeholder list ``extras`` that may be new against ``base``: only those appended,
        when ``extras`` was derived from ``base`` (``_ph_derived``); else all of them."""
        d = self._ph_derived
        return d[2] if d is not None and d[0] is extras and d[1] is base else extras

    def _refresh(self, reach: set[Any]) -> list[str]:
        """Bring the shown form of every reachable component up to date; return the placeholder ids."""
        stale, bufdep = self._stale, self._bufdep
        if stale or bufdep:
            todo = (stale & reach) | (bufdep & reach) if bufdep else stale & reach
            for cid in todo:
                self._reprocess(cid, self._patches.pop(cid, None) is not None)
            stale -= todo
        if self._patches:
            for cid in [c for c in self._patches if c in reach]:
                self._apply_patches(cid, self._patches.pop(cid))
        with_ph = self._with_ph
        if not with_ph:
            return []
        # The usual holder is one root with a long list: then no intersection set is built.
        holders = with_ph if len(with_ph) == 1 and not with_ph.isdisjoint(reach) else with_ph & reach
        if not holders:
            return []
        if len(holders) == 1:
            extras = self._proc[next(iter(holders))][0].placeholders
        else:
            merged: dict[str, None] = {}
            for cid in sorted(holders):
                for pid in self._proc[cid][0].placeholders:
                    merged[pid] = None
            extras = list(merged)
        if extras is not self._extras_seen:
            todo = self._since(extras, self._extras_seen)
            for pid in list(filterfalse(self._ph_comp.__contains__, todo)):
                self._placeholder(pid)
            self._extras_seen = extras
        return extras

    def _apply_patches(self, cid: Any, children: list[Any]) -> None:
        """Children of ``cid`` arrived: swap their placeholders back (or rebuild when that is unsafe)."""
        shown, dump = self._proc.get(cid, (None, None))
        before = shown
        removed: list[int] = []  # where each patch took its placeholder from the list before it
        for child in children:
            if shown is None:
                break
            slots = len(shown.where().get(child, ())) if dump is not None else 0
            try:
                removed.append(shown.placeholders.index(f"loading_{child}"))  # the one patch_component removes
            except ValueError:
                pass  # not in the list: patch_component cannot remove it either (no derivation follows)
            shown = patch_component(shown, child)
            if shown is not None and dump is not None:
                dump = _patched_dump(dump, child, slots)
        if shown is None:
            self._reprocess(cid)
            return
        if dump is None:
            dump = _dump_sorted(shown.comp)
        if before is not None and self._fast_scan:
            # Each patch copies the placeholder list less one id (``patch_component``).
            self._ph_derived = (shown.placeholders, before.placeholders, [], removed)
        if dump != self._proc[cid][1]:
            self._touched.add(cid)
        self._proc[cid] = (shown, dump)
        self._out_dirty.add(cid)
        if not shown.placeholders:
            self._with_ph.discard(cid)

    def _components(self) -> list[Any]:
        """The shown reachable components sorted by id (kept in step with the topology, not rebuilt; the
        list itself is returned: copy it before handing it out)."""
        topo = self._topo
        ids, out = self._out_ids, self._out
        if self._out_version != topo.version:
            ids[:] = topo.sorted_reach
            out[:] = [self._proc[cid][0].comp for cid in ids]
            self._loading_ids = sum(1 for cid in ids if isinstance(cid, str) and cid.startswith("loading_"))
            self._out_version = topo.version
            self._out_dirty.clear()
        else:
            for cid in topo.added:
                at = bisect_left(ids, cid)
                if at < len(ids) and ids[at] == cid:
                    continue
                ids.insert(at, cid)
                out.insert(at, self._proc[cid][0].comp)
                if isinstance(cid, str) and cid.startswith("loading_"):
                    self._loading_ids += 1
                self._out_dirty.discard(cid)
            for cid in self._out_dirty:
                at = bisect_left(ids, cid)
                if at < len(ids) and ids[at] == cid:
                    out[at] = self._proc[cid][0].comp
            self._out_dirty.clear()
        topo.added.clear()
        return out

    def _placeholder(self, pid: str) -> dict[str, Any]:
        """The placeholder component for ``pid`` (one shared, read-only object per id)."""
        comp = self._ph_comp.get(pid)
        if comp is None:
            comp = {"id": pid, **placeholder_body(self._v09)}
            self._ph_comp[pid] = comp
            self._ph_dump[pid] = self._ph_dumper(pid)
        return comp

    def _reprocess(self, cid: Any, patched: bool = True) -> None:
        """Make the shown form of ``cid`` from its latest version (``patched``: children of it arrived
        since its shown form was made, so that form cannot be extended)."""
        raw = self._raw.get(cid)
        comp = self._seen[cid]
        old = self._proc.get(cid)
        src = self._shown_src.get(cid)
        self._shown_src[cid] = comp
        if (
            not patched
            and old is not None
            and src is not None
            and raw is not None
            and len(self._topo.refs.get(cid, ())) >= GROWTH_MIN  # a long list may have grown
        ):
            memo = self._growth_memo  # held objects, never mutated: identity means the same pair
            known = memo[2] if memo is not None and memo[0] is src and memo[1] is comp else UNKNOWN_GROWTH
            ok = self._raw_ok
            path = known[0] if known is not UNKNOWN_GROWTH and known is not None else None
            checked = ok is not None and path is not None and ok[0] == cid and ok[2] == path and ok[1] == raw
            grown = grow_component(old[0], src, comp, raw, self._seen, self._v09, self._pids, known, checked)
            if grown is not None:
                if path is not None:
                    self._raw_ok = (cid, raw, path)
                if self._fast_scan:
                    # The old list (or all of it but its last id) plus the newly missing children's.
                    placeholders = grown[0].placeholders
                    added = placeholders[len(placeholders) - len(grown[1]) :]
                    # ... when the old list's last id (a cut one) went away with its placeholder.
                    base = old[0].placeholders
                    cut = [len(base) - 1] if len(placeholders) - len(added) < len(base) else []
                    self._ph_derived = (placeholders, base, added, cut)
                self._store(cid, grown[0], old, grown[1])
                return
        plain = False
        if raw is not None:
            plain = True
            for name in self._rewrite_names:
                if name in raw:
                    plain = False
                    break
        if plain:
            # Nothing to rewrite (no child field, no v0.8 path, no escaped key): shown as it came. The
            # parsed object is never mutated, so it can be shared.
            shown = Processed(comp, [], set(), False, set(), {}, [])
        else:
            copy = _loads(raw) if raw is not None else None
            shown = process_component(comp, self._seen, self._v09, self._children_open, copy, self._pids)
        self._store(cid, shown, old, None)

    def _store(self, cid: Any, shown: Processed, old: tuple[Processed, str] | None, fresh: list[Any] | None) -> None:
        """Record a new shown form of ``cid`` (``fresh``: its newly missing children, when known)."""
        path = shown.long_list(GROWTH_MIN)
        dump = _dump_sorted(shown.comp) if path is None else self._list_dump(cid, shown, path, old, fresh is not None)
        if old is None or old[1] != dump:
            self._touched.add(cid)
        self._proc[cid] = (shown, dump)
        self._out_dirty.add(cid)
        if fresh is None:
            missing = shown.missing
            if missing:
                registered = self._registered.get(cid)
                fresh = list(missing) if registered is None else list(missing - registered)
            else:
                fresh = missing  # empty: nothing to register
        if fresh:
            registered = self._registered.get(cid)
            if registered is None:
                registered = self._registered[cid] = set()
            for child in fresh:
                if child not in registered:
                    self._waiting.setdefault(child, set()).add(cid)
                    registered.add(child)
        if shown.placeholders:
            self._with_ph.add(cid)
        else:
            self._with_ph.discard(cid)
        if shown.buffer_dependent:
            self._bufdep.add(cid)
        else:
            self._bufdep.discard(cid)

    def _list_dump(
        self, cid: Any, shown: Processed, path: tuple[Any, ...], old: tuple[Processed, str] | None, grown: bool
    ) -> str:
        """The sorted dump of a shown form with a long id list at ``path`` (``dump_with_list``).

        ``grown``: ``shown`` was grown from ``old`` (``grow_component``), so its component is the old one
        but for that list. If the old dump was spliced around the same list, only the list's text is
        new: the text before and after it is kept (``_splice``) instead of dumping the rest again.
        """
        splice = self._splice
        if (
            grown
            and self._fast_scan
            and splice is not None
            and old is not None
            and splice[0] == cid
            and splice[1] is old[0].comp
            and splice[2] == path
        ):
            text = list_text(list_at(shown.comp, path))
            if text is not None:
                self._splice = (cid, shown.comp, path, splice[3], splice[4])
                return splice[3] + text + splice[4]
        dump, parts = dump_with_list_parts(shown.comp, path)
        self._splice = (cid, shown.comp, path, *parts) if parts is not None else None
        return dump

    def _changed(self, sid: Any, reach: set[Any], extras: list[str], dup: bool) -> tuple[list[Any], list[str]]:
        """Components, then placeholders, whose shown form differs from what ``sid`` last got."""
        contents = self._contents.get(sid, {})
        if self._cmp_sid != sid:
            self._cmp_sid = sid
            self._touched = set(self._proc)
        candidates = self._touched & reach
        self._touched -= candidates
        changed_ph: list[str] = []
        synced = self._ph_synced
        if extras and not (synced is not None and synced[0] == sid and synced[1] is extras):
            # Derived from the list all shown to sid (``_ph_synced``): only the appended ids can be new.
            todo = self._since(extras, synced[1]) if synced is not None and synced[0] == sid else extras
            shown = self._ph_shown.get(sid, set())
            if not shown.issuperset(todo):
                changed_ph = list(filterfalse(shown.__contains__, todo))
        if dup:  # an id shown both as a component and as a placeholder
            for pid in extras:
                if pid in reach:
                    candidates.add(pid)
                    if pid not in changed_ph and contents.get(pid) != self._ph_dump[pid]:
                        changed_ph.append(pid)
        changed_real = [cid for cid in candidates if self._proc[cid][1] != contents.get(cid)]
        return changed_real, changed_ph

    def _partial_ok(
        self,
        sid: Any,
        message: dict[str, Any],
        reach: set[Any],
        extras: list[str],
        changed: list[Any],
        dup: bool,
    ) -> bool:
        """Lenient validation of the synthesized update (a failure silently drops it).

        When the schema allows it and the reachable components form a tree, the update is valid exactly
        when no id repeats and each component is valid on its own, so verdicts are cached per component
        and only changed components are validated again.
        """
        if not self._splittable or not self._topo.is_tree or self._schema_valid is None:
            self._bad_known.discard(sid)
            return self._validator.is_valid_partial(message)
        bad = self._bad.setdefault(sid, set())
        todo: Any = changed if sid in self._bad_known else reach
        self._bad_known.add(sid)
        for cid in todo:
            if cid not in reach:
                continue
            if self._component_ok(sid, cid):
                bad.discard(cid)
            else:
                bad.add(cid)
        if dup:
            return False
        if not bad.isdisjoint(reach):
            return False
        if extras:
            valid = self._ph_valid
            if valid is not None and valid[0] == sid and valid[1] is extras:
                return True
            # Derived from a list all valid for sid: only the appended ids can be unknown (those of the
            # old list are in ``ok``, which never shares an id with ``nok``).
            todo = self._since(extras, valid[1]) if valid is not None and valid[0] == sid else extras
            ok = self._ph_ok.setdefault(sid, set())
            if ok.issuperset(todo):
                self._ph_valid = (sid, extras)
                return True
            nok = self._ph_bad.setdefault(sid, set())
            if not nok.isdisjoint(todo):
                return False
            fresh = list(filterfalse(ok.__contains__, todo))
            # Placeholders hold no references, so a batch of them is valid exactly when each one is:
            # one validation for all new placeholders, one by one only if the batch fails. Distinct
            # string ids, an empty child list, no path, no call: the integrity rules cannot fail on such
            # a batch, so only its schema is checked.
            if self._schema_valid([self._message(sid, [self._placeholder(p) for p in fresh])]):
                ok.update(fresh)
            else:
                for pid in fresh:
                    if self._single_ok(sid, self._placeholder(pid), None):
                        ok.add(pid)
                    else:
                        nok.add(pid)
                        return False
        return True

    def _message(self, sid: Any, comps: list[Any]) -> dict[str, Any]:
        if self._v09:
            return {"version": "v0.9", _UC: {"components": comps, "surfaceId": sid}}
        return {_SU: {"surfaceId": sid, "components": comps}}

    def _component_ok(self, sid: Any, cid: Any) -> bool:
        shown, dump = self._proc[cid]
        key = (sid, dump)
        verdict = self._verdicts.get(key)
        if verdict is None:
            raw = None if shown.buffer_dependent or str(cid)[:8] == "loading_" else self._raw.get(cid)
            verdict = self._single_ok(sid, shown.comp, raw)
            if len(self._verdicts) > 8192:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict

    def _single_ok(self, sid: Any, comp: dict[str, Any], raw: str | None) -> bool:
        """Is the one-component update valid (lenient)? Schema and integrity, as the validator decides.

        A one-component update without a start message has no root, so its integrity rules reduce to a
        self reference (only possible through a placeholder id, i.e. when ``raw`` is None) and the
        depth/path limits, which do not change when child ids are swapped for placeholders: that verdict
        is cached per raw component (``raw``).
        """
        single = self._message(sid, [comp])
        if raw is None:
            return self._validator.is_valid_partial(single)
        if not self._schema_valid([single]):
            return False
        limits = self._limits.get(raw)
        if limits is None:
            if _limits_trivially_ok(raw):
                limits = True
            else:
                try:
                    check_limits_and_paths(single)
                    limits = True
                except ValueError:
                    limits = False
            # Cached either way: a long root is checked again after every child that arrives.
            if len(self._limits) > 8192:
                self._limits.clear()
            self._limits[raw] = limits
        return limits


# =====================================================================================================
# Helpers.
# =====================================================================================================

# What stands between a key and its array value.
_ARRAY_AFTER_KEY = re.compile(r"[ \t\n\r]*:[ \t\n\r]*\[")

_VALUE_RES = {
    key: (
        re.compile(rf'"{key}"\s*:\s*"([^"]+)"'),
        re.compile(rf'"{key}"\s*(?::\s*(?:"[^"]*)?)?\Z'),
    )
    for key in ("surfaceId", "root")
}

# Keywords that constrain an array as a whole; with none of them on the way to the components list, an
# update is valid exactly when each of its components is (so verdicts can be cached per component).
_ARRAY_WIDE = ("uniqueItems", "maxItems", "contains", "prefixItems", "unevaluatedItems", "minContains", "maxContains")




def _quoted_before(text: str, end: int, window: int) -> str:
    """``text[k:end]`` where ``text[end - 1]`` is a quote and ``k`` is the quote before it, looked for
    in the last ``window`` characters only ("" when there is none)."""
    k = text.rfind('"', max(0, end - window), end - 1)
    return text[k:end] if k >= 0 else ""


# String items of a list: no escape, no control character (their text is their value), comma-separated.
_STRING_ITEMS = re.compile(r'"[^"\\\x00-\x1f]*"(?:[ \t\n\r]*,[ \t\n\r]*"[^"\\\x00-\x1f]*")*')


def _grown_text(before: str, healed: str) -> list[str] | None:
    """The string items ``healed`` holds where ``before`` holds its last item, when that is the only
    difference between the two healed texts and that item is one of the innermost open list (None
    otherwise). The last value of the returned list is that item of ``before``.

    ``before`` ends with the closers of its open containers, a list first, after a string item (after
    ``,`` or ``[``) without escapes; ``healed`` is the same text up to that item, then string items
    without escapes, then the same closers.
    """
    body = before.rstrip("]}")
    closers = len(before) - len(body)
    if not closers or before[len(body)] != "]" or not body.endswith('"'):
        return None
    k = body.rfind('"', 0, len(body) - 1)
    if k < 1 or "\\" in body[k:] or not body[:k].rstrip(" \t\n\r").endswith((",", "[")):
        return None
    end = len(healed) - closers
    if (
        end <= k
        or healed[end - 1] != '"'
        or not healed.endswith(before[len(body) :])
        or not healed.startswith(body[:k])
        or _STRING_ITEMS.fullmatch(healed, k, end) is None
    ):
        return None
    items = healed[k:end].split('"')[1::2]
    items.append(body[k + 1 : -1])
    return items


def _surely_invalid(healed: str) -> bool:
    """A healed fragment that cannot be JSON, told without parsing it (a failed parse costs a Python-level
    ``JSONDecodeError``; about one chunk in five ends like this, e.g. after ``"text":`` or ``{"Text"``).

    What precedes the trailing closers and whitespace is either a colon (no value follows it, or the
    text ends inside a string) or a string whose opening quote comes right after ``{`` (a key without a
    colon, or, when that quote closed a string instead, a string left open). A backslash before that
    quote (an escaped quote) is not ``{``, so escapes never qualify.
    """
    body = healed.rstrip("}] \t\n\r")
    if body.endswith(":"):
        return True
    if body.endswith('"'):
        k = body.rfind('"', 0, -1)
        return k >= 0 and body[:k].rstrip(" \t\n\r").endswith("{")
    return False


def _schema_verdict(validator: Any, v09: bool) -> Callable[[list[Any]], bool] | None:
    """The validator's schema verdict on a list of messages, as a boolean (None: not available).

    The same decision as its schema step (``_schema_v09`` / ``_schema_v08``, which raise exactly when
    these return False) without the error report that step builds before raising: each rejected
    component (a cut one, say) would otherwise pay for jsonschema's full error walk two or three times.
    """
    if v09:
        message_ok = getattr(validator, "_message_ok", None)
        if message_ok is None:
            return None
        check: Callable[[list[Any]], bool] = lambda messages: all(map(message_ok, messages))
    else:
        whole = getattr(validator, "_whole", None)
        whole_ok = getattr(whole, "is_valid", None)
        if whole_ok is None:
            return None
        check = whole_ok
        # Its compiled (jsonschema-rs) validator, asked first as ``is_valid`` asks it: a "valid" from it is
        # the verdict, anything else goes to ``is_valid`` itself (one Python call less per component).
        compiled = getattr(whole, "_fast", None)
        fast_ok = getattr(compiled() if callable(compiled) else None, "is_valid", None)
        if fast_ok is not None:

            def fast_verdict(messages: list[Any]) -> bool:
                try:
                    if fast_ok(messages):
                        return True
                except Exception:  # noqa: BLE001 - what is_valid tolerates too; it decides then
                    pass
                try:
                    return bool(whole_ok(messages))
                except ValueError:  # e.g. an explanation over the step budget: the schema step rejects it
                    return False

            return fast_verdict

    def verdict(messages: list[Any]) -> bool:
        try:
            return bool(check(messages))
        except ValueError:  # e.g. an explanation over the step budget: the schema step rejects it too
            return False

    return verdict


def _patched_dump(dump: str, child: Any, slots: int) -> str | None:
    """The sorted dump of a shown component after its ``slots`` placeholders of ``child`` were swapped
    back, from the dump before (None when that cannot be done safely: then the caller dumps again).

    Keys do not change, so only the ``"loading_<child>"`` string values do. When both ids are plain
    (no character JSON escapes), that token cannot overlap another occurrence of itself in JSON text,
    so if it occurs exactly ``slots`` times, those occurrences are the patched slots.
    """
    if not slots or child.__class__ is not str:
        return None
    pid = "loading_" + child
    token = encode_basestring_ascii(pid)
    if len(token) != len(pid) + 2:
        return None
    if slots == 1:  # the usual case: one occurrence, found and proven alone in one pass over the dump
        at = dump.find(token)
        if at < 0 or dump.find(token, at + len(token)) >= 0:
            return None
        return dump[:at] + '"' + child + '"' + dump[at + len(token) :]
    if dump.count(token) != slots:
        return None
    return dump.replace(token, '"' + child + '"')


def _limits_trivially_ok(raw: str) -> bool:
    """A component whose JSON text cannot break a limit: no ``~`` (every path is then valid), no function
    call, and too few brackets to nest 50 deep inside a message. Escapes (``\\u``) could hide either
    character, so any escape sends it to the full check."""
    return (
        "\\u" not in raw
        and "~" not in raw
        and '"call"' not in raw
        and raw.count("{") + raw.count("[") <= 40
    )


def _split_validation_ok(schema: Any) -> bool:
    text = json.dumps(schema) if schema is not None else ""
    return not any(f'"{k}"' in text for k in _ARRAY_WIDE)


def _partial_tag_len(text: str, tag: str) -> int:
    """Length of the longest proper prefix of ``tag`` that ``text`` ends with (held back for later).

    The tags hold one ``<``, at their start, so only the suffix from the last ``<`` can qualify.
    """
    at = text.rfind("<", max(0, len(text) - len(tag) + 1))
    if at < 0:
        return 0
    size = len(text) - at
    return size if size < len(tag) and tag.startswith(text[at:]) else 0


def _dedupe_surface_updates(messages: list[Any]) -> list[Any]:
    """Within one returned part, keep only the last ``surfaceUpdate`` of each surface."""
    if len(messages) < 2:  # the usual part: nothing to drop
        return messages
    out: list[Any] = []
    seen: set[Any] = set()
    for message in reversed(messages):
        sid = None
        if isinstance(message, dict) and _SU in message:
            body = message[_SU]
            sid = body.get("surfaceId") if isinstance(body, dict) else None
        if sid:
            try:
                if sid in seen:
                    continue
                seen.add(sid)
            except TypeError:
                pass
        out.append(message)
    out.reverse()
    return out


def _has(container: Any, key: Any) -> bool:
    try:
        return key in container
    except TypeError:
        return False


def _get(mapping: dict[Any, Any], key: Any) -> Any:
    try:
        return mapping.get(key)
    except TypeError:
        return None


def _put(mapping: dict[Any, Any], key: Any, value: Any) -> None:
    try:
        mapping[key] = value
    except TypeError:
        pass


def _contents_to_dict(raw: Any) -> dict[Any, Any]:
    """v0.8 data-model entries as a flat key -> value mapping (maps recursively)."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, list):
        return {}
    out: dict[Any, Any] = {}
    for entry in raw:
        if not isinstance(entry, dict):
            continue
        key = entry.get("key")
        val = None
        for vkey in ("value", "valueString", "valueNumber", "valueBoolean"):
            if vkey in entry:
                val = entry[vkey]
                break
        if val is None and "valueMap" in entry:
            val = _contents_to_dict(entry["valueMap"])
        if key and val is not None:
            _put(out, key, val)
    return out


def _prune_entries(entries: Any) -> Any:
    """Drop data-model entries that have a key but no value yet (and maps left with nothing complete)."""
    if not isinstance(entries, list):
        return entries
    kept = []
    for entry in entries:
        if not isinstance(entry, dict):
            kept.append(entry)
            continue
        has_value = any(v in entry for v in ("value", "valueString", "valueNumber", "valueBoolean"))
        if "valueMap" in entry:
            inner = _prune_entries(entry["valueMap"])
            if isinstance(inner, list):
                if not inner and len(entry["valueMap"]) > 0:
                    del entry["valueMap"]
                else:
                    entry["valueMap"] = inner
                    has_value = True
        if has_value and "key" in entry:
            kept.append(entry)
    return kept
