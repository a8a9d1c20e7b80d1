"""``FileCheck``: LLVM-FileCheck-style assertions on strings, with PyTorch's semantics and messages.

PyTorch implements it in C++ (``torch/csrc/jit/testing/file_check.cpp``) for TorchScript graphs;
the checks themselves only read text, so this is a plain-Python port working on strings.
"""

import bisect
import re

_CONTEXT = 3

# (type, display name)
CHECK, CHECK_NEXT, CHECK_SAME, CHECK_NOT, CHECK_COUNT, CHECK_DAG, CHECK_SOURCE_HIGHLIGHTED, CHECK_REGEX = range(8)
_NAMES = {CHECK: "CHECK", CHECK_NEXT: "CHECK-NEXT", CHECK_SAME: "CHECK-SAME", CHECK_NOT: "CHECK-NOT",
          CHECK_DAG: "CHECK-DAG", CHECK_SOURCE_HIGHLIGHTED: "CHECK-SOURCE-HIGHLIGHTED", CHECK_REGEX: "CHECK-REGEX"}
_ESCAPES = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t", "\v": "\\v"}


def _quoted(s):
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append("\\" + format(ord(ch) & 0o777, "03o"))
    return '"' + "".join(out) + '"'


class _Check:
    __slots__ = ("type", "text", "count")

    def __init__(self, type_, text, count=None):
        self.type, self.text, self.count = type_, text, count

    def __str__(self):
        name = f"CHECK-COUNT-{self.count}" if self.type == CHECK_COUNT else _NAMES[self.type]
        return f"{name}: {self.text}"


def _highlight(text, start, end):
    """``SourceRange::highlight``: the range's lines with ``~`` under it, in 3 lines of context."""
    if end - start == len(text):
        return text
    range_end = min(len(text), end)
    if start > len(text):
        return ""
    begin_line, end_line = start, range_end
    while begin_line > 0 and text[begin_line - 1] != "\n":
        begin_line -= 1
    while end_line < len(text) and text[end_line] != "\n":
        end_line += 1
    begin_context, i = begin_line, 0
    while begin_context > 0:
        if text[begin_context - 1] == "\n":
            i += 1
        if i >= _CONTEXT:
            break
        begin_context -= 1
    end_context, i = end_line, 0
    while end_context < len(text):
        if text[end_context] == "\n":
            i += 1
        if i >= _CONTEXT:
            break
        end_context += 1

    def at(k):
        # C++ strings read a NUL one past the end.
        return text[k] if k < len(text) else "\0"

    out = [text[begin_context:start]]
    line_start = line_end = start
    while line_start < range_end:
        while line_end < len(text) and text[line_end] != "\n":
            line_end += 1
        line = text[line_start:line_end + 1]
        out.append(line if line.endswith("\n") else line + "\n")
        hb, he = line_start, line_start
        while hb > 0 and text[hb - 1] != "\n":
            hb -= 1
        while he < range_end and text[he] != "\n":
            he += 1
        empty = 0
        for k in range(hb, he):
            if text[k] == " " or k < start:
                empty += 1
            else:
                break
        marked = he - hb - empty
        if marked > 0:
            more_lines = any(at(k) not in ("\n", " ") for k in range(line_end, range_end + 1))
            out.append(" " * empty + "~" * marked + ("\n" if more_lines and line_end != range_end else " <--- HERE\n"))
        line_end += 1
        line_start = line_end
    if line_end <= len(text):
        # A range ending before it starts leaves end_context behind line_end; C++'s substr then
        # takes the rest of the text, and so does PyTorch's message.
        tail = text[line_end:end_context] if end_context >= line_end else text[line_end:]
        out.append(tail)
        if tail and not tail.endswith("\n"):
            out.append("\n")
    return "".join(out)


def _assert_find(text, sub, start, end, check=None):
    pos = text.find(sub, start)
    if pos == -1 or pos + len(sub) > end:
        msg = (f"Expected to find {_quoted(sub)} but did not find it\nSearched string:\n"
               + _highlight(text, start, len(sub)))
        if check is not None:
            msg += f"From {check}\n"
        raise RuntimeError(msg)
    return pos


def _assert_not_find(text, sub, start, end, check):
    pos = text.find(sub, start)
    if pos != -1 and pos + len(sub) <= end:
        raise RuntimeError(f"Expected to not find {_quoted(sub)} but found it\n"
                           + _highlight(text, pos, pos + len(sub)) + f"From {check}\n")


class FileCheck:
    """Checks that a string contains patterns in order, in the manner of LLVM's FileCheck.

    Build the checks with the ``check*`` methods (each returns the FileCheck) and apply
    them with :meth:`run`; a failed check raises ``RuntimeError`` showing where in the
    string the search failed.

    Example::

        >>> FileCheck().check("def").check_next("return").check_not("pass").run(source)
    """

    def __init__(self):
        self._checks = []
        self._groups = []
        self._has_run = False

    def __del__(self):
        if not getattr(self, "_has_run", True):
            print("You have not run this instance of FileCheck!")
            print("FileCheck checks:\n" + "".join(f"\t{c}\n" for c in self._checks), end="")

    def _add(self, check):
        self._checks.append(check)
        # Consecutive CHECK-DAGs, and consecutive CHECK-NOTs, are matched as one group.
        if self._groups and check.type in (CHECK_NOT, CHECK_DAG) and self._groups[-1][0].type == check.type:
            self._groups[-1].append(check)
        else:
            self._groups.append([check])
        self._has_run = False
        return self

    def check(self, s):
        """Checks that ``s`` occurs after the previous match."""
        return self._add(_Check(CHECK, s))

    def check_not(self, s):
        """Checks that ``s`` does not occur between the previous and the next match."""
        return self._add(_Check(CHECK_NOT, s))

    def check_same(self, s):
        """Checks that ``s`` occurs on the same line as the previous match."""
        return self._add(_Check(CHECK_SAME, s))

    def check_next(self, s):
        """Checks that ``s`` occurs on the line after the previous match."""
        return self._add(_Check(CHECK_NEXT, s))

    def check_count(self, s, count, exactly=False):
        """Checks that ``s`` occurs ``count`` times after the previous match (and no more if ``exactly``)."""
        if count == 0 and not exactly:
            raise RuntimeError("count != 0 || exactly INTERNAL ASSERT FAILED: Count == 0 && !exactly doesn't do "
                               "anything")
        if count:
            self._add(_Check(CHECK_COUNT, s, count))
        if exactly:
            self._add(_Check(CHECK_NOT, s))
        return self

    def check_dag(self, s):
        """Checks that ``s`` occurs after the previous match; consecutive check_dags may match in any order."""
        return self._add(_Check(CHECK_DAG, s))

    def check_source_highlighted(self, s):
        """Checks that an occurrence of ``s`` is underlined with ``~`` on the next line."""
        return self._add(_Check(CHECK_SOURCE_HIGHLIGHTED, s))

    def check_regex(self, s):
        """Checks that the regular expression ``s`` matches after the previous match."""
        return self._add(_Check(CHECK_REGEX, s))

    def run(self, checks_file, test_file=None):
        """Runs the checks on ``test_file``. Called with one string, that string is the test
        file; with two, the first holds ``# CHECK: ...`` annotations parsed into checks."""
        if test_file is None:
            test_file = checks_file
        else:
            self._parse(checks_file)
        if not isinstance(test_file, str):
            test_file = str(test_file)
        self._has_run = True
        if not self._groups or not self._groups[0]:
            raise RuntimeError("No checks have been added to this instance ofFilecheck! Check for bad input.")
        self._do_checks(test_file)

    # --- parsing ``# CHECK`` annotations ---------------------------------------------------------

    _SUFFIXES = ((CHECK, ": "), (CHECK_NEXT, "-NEXT: "), (CHECK_SAME, "-SAME: "), (CHECK_NOT, "-NOT: "),
                 (CHECK_DAG, "-DAG: "), (CHECK_COUNT, "-COUNT-"), (CHECK_SOURCE_HIGHLIGHTED, "-SOURCE-HIGHLIGHTED: "),
                 (CHECK_REGEX, "-REGEX: "))

    def _parse(self, text):
        start = self._next_start(text, 0)
        while start != -1:
            end = self._parse_single(text, start)
            if end is None:
                self._has_run = True
                raise RuntimeError("Could not parse check at:\n" + _highlight(text, start, start + 1)
                                   + "Check for bad input.")
            start = self._next_start(text, end)

    @staticmethod
    def _next_start(text, prev_end):
        while True:
            start = text.find("#", prev_end)
            if start == -1:
                return -1
            start += 1
            i = 0
            while start + i < len(text) and i < 6 and text[start + i] in " \t":
                i += 1
            if text[start + i:start + i + 5] == "CHECK":
                return start + i + 5
            prev_end = start + i + 1

    def _parse_single(self, text, start):
        for type_, suffix in self._SUFFIXES:
            if not text.startswith(suffix, start):
                continue
            begin = start + len(suffix)
            end_line = text.find("\n", begin)
            if end_line == -1:
                end_line = len(text)
            count, exactly = None, False
            if type_ == CHECK_COUNT:
                if text.startswith("EXACTLY-", begin):
                    exactly = True
                    begin += len("EXACTLY-")
                colon = _assert_find(text, ":", begin, end_line)
                count = int(text[begin:colon])
                begin = colon + 2
            check = _Check(type_, text[begin:end_line], count)
            self._add(check)
            if exactly:
                self._add(_Check(CHECK_NOT, check.text))
            return end_line
        return None

    # --- matching --------------------------------------------------------------------------------

    def _do_checks(self, text):
        prev = (0, 0)
        groups = self._groups
        i = 0
        while i < len(groups):
            group = groups[i]
            if group[0].type != CHECK_NOT:
                prev = self._match_group(group, text, prev)
            elif i + 1 < len(groups):
                after = self._match_group(groups[i + 1], text, prev)
                self._check_nots(group, text, prev, after)
                prev = after
                i += 1
            else:
                self._check_nots(group, text, prev, (len(text) + 1, len(text) + 1))
            i += 1

    @staticmethod
    def _check_nots(nots, text, prev, nxt):
        start, end = prev[1], nxt[0]
        if end < start:
            return
        for check in nots:
            _assert_not_find(text, check.text, start, end, check)

    def _match_group(self, group, text, prev):
        check = group[0]
        n = len(text)
        if check.type == CHECK_DAG:
            beg, end = None, 0
            for c in group:
                pos = _assert_find(text, c.text, prev[1], n, c)
                beg = pos if beg is None else min(beg, pos)
                end = max(end, pos + len(c.text))
            return (beg, end)
        start = end = prev[1]
        if check.type == CHECK:
            start = _assert_find(text, check.text, start, n, check)
            end = start + len(check.text)
        elif check.type == CHECK_SAME:
            pos = _assert_find(text, check.text, start, n, check)
            _assert_not_find(text, "\n", prev[1], pos, check)
            start, end = pos, pos + len(check.text)
        elif check.type == CHECK_NEXT:
            line_end = _assert_find(text, "\n", start, n, check)
            pos = _assert_find(text, check.text, line_end + 1, n, check)
            _assert_not_find(text, "\n", line_end + 1, pos, check)
            start, end = pos, pos + len(check.text)
        elif check.type == CHECK_COUNT:
            first = None
            for _ in range(check.count):
                start = _assert_find(text, check.text, start, n, check)
                first = start if first is None else min(first, start)
                end = start + len(check.text)
                start = end
            start = first
        elif check.type == CHECK_REGEX:
            m = re.compile(check.text).search(text, start)
            if m is None:
                raise RuntimeError(f"Expected to find regex {_quoted(check.text)} but did not find it\n"
                                   f"Searched string:\nFrom {check}\n")
            start, end = m.start(), m.end()
        elif check.type == CHECK_SOURCE_HIGHLIGHTED:
            self._check_source_highlighted(check, text, start)
        return (start, end)

    @staticmethod
    def _check_source_highlighted(check, text, start_offset):
        s = check.text

        def fail(pos):
            raise RuntimeError(f"Expected to find {_quoted(s)}highlighted but it is not.\n"
                               + _highlight(text, pos, len(s)))

        line_starts = [0] + [k + 1 for k, ch in enumerate(text) if ch == "\n"]
        search = start_offset
        found_once = False
        while True:
            pos = text.find(s, search)
            if pos == -1:
                break
            found_once = True
            lineno = bisect.bisect_right(line_starts, pos) - 1
            col = pos - line_starts[lineno]
            if lineno + 1 >= len(line_starts):
                fail(pos)
            hs = line_starts[lineno + 1] + col
            he = min(hs + len(s), len(text))
            if he >= len(text):
                fail(pos)
            if all(text[k] == "~" for k in range(hs, he)):
                _assert_not_find(text, "~", hs - 1, hs, check)
                _assert_not_find(text, "~", he, he + 1, check)
                return
            search = pos + 1
        if not found_once:
            _assert_find(text, s, start_offset, len(text), check)
        fail(start_offset)
