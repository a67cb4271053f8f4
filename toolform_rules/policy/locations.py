"""Where a tool call points: file paths, e-mail domains, URL hosts and schemes, IP addresses.

The policy language checks arguments that a language model wrote, so every function here
reads hostile text.  They are *lexical*: none touches the filesystem, the resolver or the
network, so a symbolic link or a DNS answer can still lead elsewhere; a policy that needs
more must resolve for itself.

Each function fails closed.  ``path_within`` answers ``False`` for a path it cannot place;
the others raise :class:`~toolform_rules.errors.EvaluationError` (``kind="value"``) for
text they cannot read, which the policy engine turns into a finding.  Nothing else is
ever raised, whatever the string, and the work is linear in its length.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Iterator
from typing import NamedTuple

from toolform_rules.errors import EvaluationError

__all__ = ["email_domain", "ip_is_private", "path_within", "url_host", "url_scheme"]

_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
_DECIMAL = frozenset("0123456789")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SCHEME_CHARS = _ASCII_LETTERS | _DECIMAL | frozenset("+-.")

# One character class, no quantifier: linear on any input.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_NOT_IN_ADDRESS = re.compile("[\\s,;<>\x00-\x1f\x7f-\x9f]")

# Characters that some tool may treat as a separator although NFKC leaves them alone
# (Windows "best fit" conversion to a code page, for one, maps look-alikes to / and \).
# Splitting on them too costs a legitimate name nothing but a component boundary.
_BACKSLASH_LIKE = "\\\u2216\u29f5\u29f9\ufe68\uff3c"
_SLASH_LIKE = "/\u2044\u2215\u29f8\uff0f"
_SEPARATORS = frozenset(_BACKSLASH_LIKE + _SLASH_LIKE)

# Decoding stops here: three layers of %25 are already far beyond honest use.
_MAX_DECODE_ROUNDS = 3

# UTS 46 (what browsers and IDNA mail systems apply) maps these to a full stop; NFKC
# folds only the fullwidth one.
_DOT_EQUIVALENTS = "\u3002\uff0e\uff61"

_SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})

# WHATWG URL: leading and trailing C0 controls and spaces are stripped, tabs and newlines
# removed anywhere.
_URL_STRIP = "".join(chr(code) for code in range(0x21))

_SHARED_SPACE = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")

_IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _show(value: str) -> str:
    """``repr`` of at most ~60 characters: an error message must stay one readable line."""
    if len(value) <= 60:
        return repr(value)
    return repr(value[:57]) + "..."


def _fail(message: str) -> EvaluationError:
    return EvaluationError(message, kind="value")


def _nfkc(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)


def _replace_all(text: str, chars: str | frozenset[str], by: str) -> str:
    # str.replace runs in C; str.translate with a mapping is per character in Python objects.
    for ch in chars:
        if ch in text:
            text = text.replace(ch, by)
    return text


def _percent_decode(text: str) -> str | None:
    """One round of ``%XX`` decoding; ``None`` when the escapes are not valid UTF-8.

    Invalid UTF-8 is refused rather than replaced: overlong forms such as ``%c0%ae`` have
    been read as ``.`` by real servers.

    >>> _percent_decode("%2e%2E/x%e2%80%a4%zz%")
    '../x\u2024%zz%'
    >>> _percent_decode("%c0%ae") is None
    True
    """
    if "%" not in text:
        return text
    pieces = text.split("%")
    out = [pieces[0]]
    pending = bytearray()
    for piece in pieces[1:]:
        if len(piece) >= 2 and piece[0] in _HEX and piece[1] in _HEX:
            pending.append(int(piece[:2], 16))
            if len(piece) == 2:
                # The next escape may continue this UTF-8 sequence.
                continue
            tail = piece[2:]
        else:
            tail = "%" + piece
        if pending:
            try:
                out.append(pending.decode("utf-8"))
            except UnicodeDecodeError:
                return None
            pending.clear()
        out.append(tail)
    if pending:
        try:
            out.append(pending.decode("utf-8"))
        except UnicodeDecodeError:
            return None
    return "".join(out)


# --------------------------------------------------------------------------- paths


class _Place(NamedTuple):
    drive: str | None
    absolute: bool
    parts: tuple[str, ...]


def _is_scheme(text: str) -> bool:
    return bool(text) and text[0] in _ASCII_LETTERS and all(ch in _SCHEME_CHARS for ch in text[1:])


def _place(text: str) -> _Place | str:
    """The drive, absoluteness and components of one path; a reason string when it cannot be placed."""
    refused = _unplaceable(text)
    if refused is not None:
        return refused
    drive: str | None = None
    rest = text
    if len(text) >= 2 and text[1] == ":" and text[0] in _ASCII_LETTERS:
        drive, rest = text[0].lower(), text[2:]
        if not rest or rest[0] not in _SEPARATORS:
            # "C:foo" is relative to the current directory of drive C, which is unknowable.
            return "it is relative to a drive's current directory"
    parts = _replace_all(rest, _SEPARATORS, "/").split("/")
    if parts[0].endswith(":") and _is_scheme(parts[0][:-1]):
        return "it is a URL, not a path"
    kept = [part for part in parts if part and part != "."]
    if any(" " in part and "." in part and not part.strip(" .") for part in kept):
        # Windows trims trailing dots and spaces, so ".. " may act as "..".
        return "a component is only dots and spaces"
    return _Place(drive, rest[:1] in _SEPARATORS, tuple(kept))


def _unplaceable(text: str) -> str | None:
    """Why a path cannot be placed whatever its components: ``None`` when it may be."""
    if not text:
        return "it is empty"
    if _CONTROL.search(text):
        return "it holds a control character"
    if text.startswith("~"):
        return "it starts with '~' (home expansion)"
    if len(text) >= 2 and text[0] in _SEPARATORS and text[1] in _SEPARATORS and text[:2] != "//":
        return "it is a UNC or device path"
    return None


def _resolve(parts: tuple[str, ...], absolute: bool) -> tuple[str, ...]:
    stack: list[str] = []
    for part in parts:
        if part == "..":
            if stack and stack[-1] != "..":
                stack.pop()
            elif not absolute:
                stack.append("..")
            # ".." at an absolute root stays at the root, as the kernel does.
        else:
            stack.append(part)
    return tuple(stack)


def _within(path: _Place, root: _Place) -> bool:
    if path.absolute:
        if path.drive != root.drive or not root.absolute:
            return False
        resolved = _resolve(path.parts, True)
    else:
        resolved = _resolve(root.parts + path.parts, root.absolute)
    return resolved[:len(root.parts)] == root.parts


def _path_forms(text: str) -> Iterator[str | None]:
    """The raw path and every form decoding and NFKC lead to; ``None`` when they do not settle.

    A generator, so that a long path that NFKC expands is never held in many forms at once.
    """
    yield text
    current = text
    for _ in range(_MAX_DECODE_ROUNDS + 1):
        decoded = _percent_decode(current)
        if decoded is None:
            yield None
            return
        normalised = _nfkc(current)
        folded = normalised if decoded is current else _nfkc(decoded)
        if normalised != current:
            yield normalised
        if decoded != current and decoded != normalised:
            yield decoded
        if folded == current:
            return
        if folded != decoded and folded != normalised:
            yield folded
        current = folded
    yield None


def path_within(path: str, root: str) -> bool:
    """True when ``path`` lies at or under ``root``, read lexically; False when in doubt.

    The path is split into components and resolved without touching the filesystem:

    * ``/`` and ``\\`` both separate components (a Windows agent or a downstream tool may
      read ``\\`` so), as do a few look-alikes such as U+2215 DIVISION SLASH; repeated and
      trailing separators are ignored and a leading ``//`` is ``/``;
    * ``.`` components drop out; ``..`` removes the component before it, and at the root of
      an absolute path stays at the root; ``...`` is an ordinary name;
    * a relative path is taken relative to ``root``; an absolute one is compared as it is;
      a relative root is allowed (both are then relative component lists, so with root
      ``data`` the path ``../data/x`` is ``data/x`` and within);
    * components compare exactly, case-sensitively: ``/srv/database`` is not within
      ``/srv/data``; the root is within itself.

    A tool may decode what it receives, so the path must be within in every form it can
    take: as written, after ``%XX`` decoding (repeated while it changes, at most three
    rounds) and after NFKC normalisation (fullwidth ``．．／``, ``‥`` and ``﹒`` fold to dots
    and slashes).  Ordinary non-ASCII names are fine.

    False (fail closed) for a path that is empty; holds a control character (C0, DEL or
    C1); starts with ``~``; is a UNC or device path (``\\\\server\\share``); has a drive
    letter (``C:\\x``) unless the root is on the same drive, or is drive-relative
    (``C:x``); is absolute without a drive when the root has one; is a URL
    (``file:///etc``); has a component of only dots and spaces (``.. ``, which Windows
    trims to ``..``); has escapes that are not UTF-8 (``%c0%ae``) or still change after
    three decoding rounds.

    The root follows the same lexical rules but is taken literally: it must not change
    under ``%XX`` decoding or NFKC (no path could be within it otherwise).  A root that is
    empty, or that a path would be refused for, raises EvaluationError.

    >>> path_within("reports/q1.csv", "/srv/data")
    True
    >>> path_within("/srv/data/./x/", "/srv/data/")
    True
    >>> path_within("a/../../etc/passwd", "/srv/data")
    False
    >>> path_within("/srv/database/x", "/srv/data")
    False
    >>> path_within("..%2f..%2fetc", "/srv/data")
    False
    >>> path_within("x\\\\..\\\\..\\\\y", "/srv/data")
    False
    >>> path_within(r"C:\\Users\\bob\\notes.txt", r"C:\\Users\\bob")
    True
    """
    root_place = _place(root)
    if isinstance(root_place, str):
        raise _fail(f"path_within() cannot use the root {_show(root)}: {root_place}.")
    root_place = root_place._replace(parts=_resolve(root_place.parts, root_place.absolute))
    folded = _percent_decode(root)
    if folded is None or _nfkc(folded) != root:
        raise _fail(f"path_within() cannot use the root {_show(root)}: it changes under "
                    f"percent-decoding or NFKC normalisation, so write it decoded and in NFKC form.")
    for form in _path_forms(path):
        if form is None:
            return False
        place = _place(form)
        if isinstance(place, str) or not _within(place, root_place):
            return False
    return True


# --------------------------------------------------------------------------- e-mail


def _check_display_name(display: str, address: str) -> None:
    """Refuse a display name that may hide a second recipient: an unquoted , ; @ < or >."""
    quoted = False
    escaped = False
    for ch in display:
        if escaped:
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif not quoted and ch in ",;@<>":
            raise _fail(f"email_domain() cannot read {_show(address)}: its display name holds "
                        f"an unquoted {ch!r}, which may hide another address.")
    if quoted:
        raise _fail(f"email_domain() cannot read {_show(address)}: its display name has an unclosed quote.")


def _domain_char_ok(ch: str) -> bool:
    if ch.isascii():
        return ch.isalnum() or ch in "-."
    # Internationalised names need letters, digits and combining marks of every script.
    return ch.isalpha() or unicodedata.category(ch) in ("Nd", "Mn", "Mc")


def _check_labels(domain: str, original: str, func: str, noun: str, extra: str = "") -> None:
    for ch in domain:
        if not (_domain_char_ok(ch) or ch in extra):
            raise _fail(f"{func}() cannot read {_show(original)}: its {noun} holds {ch!r}, "
                        f"which a domain name cannot contain.")
    if domain.startswith(".") or domain.endswith(".") or ".." in domain:
        raise _fail(f"{func}() cannot read {_show(original)}: its {noun} has an empty label.")


def _address_literal(domain: str, address: str) -> str:
    inner = domain[1:-1]
    try:
        if inner[:5].lower() == "ipv6:":
            if "%" in inner:
                # A zone means nothing to a remote mail server.
                raise ValueError(inner)
            ipaddress.IPv6Address(inner[5:])
        else:
            ipaddress.IPv4Address(inner)
    except ValueError:
        raise _fail(f"email_domain() cannot read {_show(address)}: {_show(domain)} is not an "
                    f"IPv4 or 'IPv6:' address literal.") from None
    return domain.lower()


def email_domain(address: str) -> str:
    """The lower-cased domain of one e-mail address: the part a mail server routes on.

    ``user@host`` and the display form ``Name <user@host>`` (the part inside the last
    ``<...>``) are read, after surrounding whitespace is stripped.  The domain is what
    follows the *last* ``@``, so ``"a@b"@evil.example`` and
    ``alice@corp.example@evil.example`` both give ``evil.example``.  One trailing dot is
    removed.  The address is NFKC-normalised first and the ideographic full stops that IDNA
    maps to ``.`` are folded, so a fullwidth ``ｅｖｉｌ．ｅｘａｍｐｌｅ`` is ``evil.example``, as
    an IDNA mail system routes it.  An address literal ``[192.0.2.1]`` or
    ``[IPv6:2001:db8::1]`` is returned with its brackets.

    Raises EvaluationError when there is no ``@``; the local part or domain is empty; the
    address holds whitespace, a control character, ``,``, ``;``, ``<`` or ``>`` (several
    recipients, or an injection); the display name holds one of ``,;@<>`` outside quotes;
    or the domain holds anything but letters (any script), digits, combining marks, ``-``
    and ``.``, or an empty label.

    >>> email_domain("Alice <Alice@Corp.Example>")
    'corp.example'
    >>> email_domain("alice@corp.example@evil.example")
    'evil.example'
    >>> email_domain("bob@[192.0.2.1]")
    '[192.0.2.1]'
    >>> email_domain("a@corp.example, b@evil.example")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.EvaluationError: email_domain() cannot read 'a@corp.example, b@evil.example': it holds ',', so it is not exactly one address.
    """
    text = _nfkc(address).strip()
    if text.endswith(">"):
        opening = text.rfind("<")
        if opening < 0:
            raise _fail(f"email_domain() cannot read {_show(address)}: its '>' has no '<'.")
        _check_display_name(text[:opening], address)
        text = text[opening + 1:-1].strip()
    bad = _NOT_IN_ADDRESS.search(text)
    if bad:
        raise _fail(f"email_domain() cannot read {_show(address)}: it holds {bad.group()!r}, "
                    f"so it is not exactly one address.")
    at = text.rfind("@")
    if at < 0:
        raise _fail(f"email_domain() cannot read {_show(address)}: it has no '@'.")
    local, domain = text[:at], _replace_all(text[at + 1:], _DOT_EQUIVALENTS, ".").lower()
    if domain.endswith("."):
        domain = domain[:-1]
    if not local or not domain:
        raise _fail(f"email_domain() cannot read {_show(address)}: its "
                    f"{'local part' if not local else 'domain'} is empty.")
    if domain.startswith("[") and domain.endswith("]"):
        return _address_literal(domain, address)
    _check_labels(domain, address, "email_domain", "domain")
    return domain


# --------------------------------------------------------------------------- URLs


def _clean_url(url: str) -> str:
    return _replace_all(url.strip(_URL_STRIP), "\t\n\r", "")


def _split_scheme(text: str) -> tuple[str, str] | None:
    colon = text.find(":")
    if colon <= 0 or not _is_scheme(text[:colon]):
        return None
    return text[:colon].lower(), text[colon + 1:]


def url_scheme(url: str) -> str:
    """The lower-cased scheme of ``url``, read as a browser does (WHATWG URL).

    Leading and trailing spaces and C0 controls are stripped first and tabs and newlines
    removed anywhere, so ``" java\\tscript:..."`` has the scheme ``javascript``.  A scheme
    is an ASCII letter followed by letters, digits, ``+``, ``-`` or ``.``, then ``:``; as
    in WHATWG, ``C:\\x`` has the scheme ``c`` and ``localhost:8080`` the scheme
    ``localhost``.  Raises EvaluationError when there is none.

    >>> url_scheme("HTTPS://corp.example/x")
    'https'
    >>> url_scheme(" \\tjava\\nscript:alert(1)")
    'javascript'
    >>> url_scheme("corp.example/x")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.EvaluationError: url_scheme() cannot read 'corp.example/x': it has no scheme.
    """
    split = _split_scheme(_clean_url(url))
    if split is None:
        raise _fail(f"url_scheme() cannot read {_show(url)}: it has no scheme.")
    return split[0]


def _ipv4_number(part: str) -> int | None:
    """One part of a legacy IPv4 address: hex after ``0x``, octal after ``0``, else decimal."""
    if not part:
        return None
    if part[:2] in ("0x", "0X"):
        digits, base, allowed = part[2:], 16, _HEX
    elif len(part) > 1 and part[0] == "0":
        digits, base, allowed = part[1:], 8, _OCTAL
    else:
        digits, base, allowed = part, 10, _DECIMAL
    if not all(ch in allowed for ch in digits):
        return None
    digits = digits.lstrip("0") or "0"
    # Longer is out of range anyway, and int() of a long decimal string is not linear.
    if len(digits) > 12:
        return None
    return int(digits, base)


def _legacy_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in any form ``inet_aton`` and the WHATWG host parser accept.

    >>> [str(_legacy_ipv4(x)) for x in ("127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433")]
    ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1']
    >>> _legacy_ipv4("1.2.3.4.5") is None
    True
    """
    if text.count(".") > 4:
        return None
    parts = text.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return None
        numbers.append(number)
    if any(number > 255 for number in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ends_in_number(host: str) -> bool:
    """WHATWG: a host whose last label is numeric must parse as IPv4 or is invalid."""
    last = host.rpartition(".")[2]
    if last and all(ch in _DECIMAL for ch in last):
        return True
    return last[:2] == "0x" and all(ch in _HEX for ch in last[2:])


def _authority_host(rest: str, backslash_separates: bool, url: str) -> str:
    """The host of the authority that ``rest`` (the URL after its scheme) starts with."""
    hostport = _host_and_port(rest, backslash_separates, url)
    if not hostport.startswith("["):
        host, _, port = hostport.partition(":")
        _check_port(port, url)
        return _named_host(host, url)
    close = hostport.find("]")
    if close < 0:
        raise _fail(f"url_host() cannot read {_show(url)}: its '[' has no ']'.")
    host, after = hostport[1:close], hostport[close + 1:]
    if after and not after.startswith(":"):
        raise _fail(f"url_host() cannot read {_show(url)}: text follows the ']' of its host.")
    _check_port(after[1:], url)
    try:
        if "%" in host:
            raise ValueError(host)
        return str(ipaddress.IPv6Address(host))
    except ValueError:
        raise _fail(f"url_host() cannot read {_show(url)}: {_show(host)} in brackets is "
                    f"not an IPv6 address.") from None


def _host_and_port(rest: str, backslash_separates: bool, url: str) -> str:
    """The authority that ``rest`` starts with (after ``//``), without its userinfo."""
    slashes = "/\\" if backslash_separates else "/"
    if len(rest) < 2 or rest[0] not in slashes or rest[1] not in slashes:
        raise _fail(f"url_host() cannot read {_show(url)}: it has no '//' authority.")
    body = rest[2:]
    end = len(body)
    for stop in slashes + "?#":
        found = body.find(stop, 0, end)
        if found >= 0:
            end = found
    authority = body[:end]
    return authority[authority.rfind("@") + 1:]


def _check_port(port: str, url: str) -> None:
    if port and (not all(ch in _DECIMAL for ch in port) or len(port.lstrip("0")) > 5
                 or int(port.lstrip("0") or "0") > 65535):
        raise _fail(f"url_host() cannot read {_show(url)}: its port {_show(port)} is not a number "
                    f"from 0 to 65535.")


def _named_host(host: str, url: str) -> str:
    """A host that is not in brackets: decoded, folded and lower-cased; an IPv4 address when it ends in a number."""
    decoded = _percent_decode(host)
    if decoded is None:
        raise _fail(f"url_host() cannot read {_show(url)}: its host's escapes are not UTF-8.")
    name = _replace_all(_nfkc(decoded), _DOT_EQUIVALENTS, ".").lower()
    if name.endswith("."):
        name = name[:-1]
    if not name:
        raise _fail(f"url_host() cannot read {_show(url)}: its host is empty.")
    if _ends_in_number(name):
        address = _legacy_ipv4(name)
        if address is None:
            raise _fail(f"url_host() cannot read {_show(url)}: its host {_show(name)} ends in a "
                        f"number but is not an IPv4 address.")
        return str(address)
    _check_labels(name, url, "url_host", "host", extra="_")
    return name


def url_host(url: str) -> str:
    """The lower-cased host of ``url``, without userinfo, port or brackets.

    Read as the WHATWG URL parser (browsers) reads it where that matters for security:

    * spaces and C0 controls around the URL, and tabs and newlines in it, are dropped;
    * the host is in the authority after ``//``; the authority ends at ``/``, ``?`` or
      ``#``, and for the special schemes (http, https, ws, wss, ftp, file) and
      scheme-relative URLs (``//host/x``) also at ``\\``, which is a path separator there;
    * the userinfo ends at the last ``@``: ``http://corp.example@evil.example/`` is
      ``evil.example``;
    * the host is percent-decoded, NFKC-normalised, lower-cased, and one trailing dot is
      removed (``http://%65vil.example`` is ``evil.example``);
    * a host whose last label is a number is an IPv4 address, in the legacy forms too,
      and comes back dotted (``http://0x7f.1/`` is ``127.0.0.1``); an IPv6 host comes back
      compressed, without brackets (``http://[::1]:8080/`` is ``::1``).

    Deliberate differences: ``urllib.parse`` never treats ``\\`` as a separator, so it
    reads ``http://evil.example\\@corp.example/`` as ``corp.example`` where a browser goes
    to ``evil.example``.  Clients disagree on such a URL, so when reading ``\\`` both ways
    gives two different valid hosts, EvaluationError is raised rather than picking one.
    Internationalised hosts are returned in Unicode, not converted to ``xn--`` form.

    Raises EvaluationError for a URL with no ``//`` authority (``mailto:x@y``,
    ``corp.example/x``); an empty host (``file:///x``); a port that is not a number up to
    65535; an IPv6 zone or a bracketed host that is not IPv6; a numeric last label that is
    not an IPv4 address (``http://1.2.3.4.5/``); a host with anything but letters, digits,
    combining marks, ``-``, ``_`` and ``.`` after decoding, or with an empty label.

    >>> url_host("HTTPS://alice@Corp.Example.:8443/x?y#z")
    'corp.example'
    >>> url_host("http://corp.example@evil.example/")
    'evil.example'
    >>> url_host("http://[::1]:8080/")
    '::1'
    >>> url_host("//%65vil.example/x")
    'evil.example'
    >>> url_host("http://0x7f.1/")
    '127.0.0.1'
    >>> url_host("mailto:alice@corp.example")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.EvaluationError: url_host() cannot read 'mailto:alice@corp.example': it has no '//' authority.
    """
    text = _clean_url(url)
    split = _split_scheme(text)
    if split is None:
        scheme, rest = "", text
        # A scheme-relative URL takes its base's scheme, which is web in practice.
        primary = True
    else:
        scheme, rest = split
        primary = scheme in _SPECIAL_SCHEMES
    if scheme == "file" and rest[:2] in ("//", "\\\\", "/\\", "\\/"):
        drive = rest[2:4]
        if len(drive) == 2 and drive[0] in _ASCII_LETTERS and drive[1] in ":|" and rest[4:5] in ("", "/", "\\", "?", "#"):
            # WHATWG reads file://C:/x as a drive path with an empty host.
            raise _fail(f"url_host() cannot read {_show(url)}: its host is empty.")
    host = _authority_host(rest, primary, url)
    if "\\" in rest:
        try:
            other = _authority_host(rest, not primary, url)
        except EvaluationError:
            other = host
        if other != host:
            raise _fail(f"url_host() cannot read {_show(url)}: clients disagree on its host "
                        f"({host!r} if '\\' separates, {other!r} if not).")
    return host


# --------------------------------------------------------------------------- IP addresses


def _read_ip(address: str) -> _IPAddress:
    text = address
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        body, percent, zone = text.partition("%")
        if percent and (not zone or not all(ch.isascii() and (ch.isalnum() or ch in "-_.") for ch in zone)):
            raise _fail(f"ip_is_private() cannot read {_show(address)}: its zone is not a plain name.")
        try:
            return ipaddress.IPv6Address(body)
        except ValueError:
            raise _fail(f"ip_is_private() cannot read {_show(address)} as an IP address.") from None
    legacy = _legacy_ipv4(text)
    if legacy is None:
        raise _fail(f"ip_is_private() cannot read {_show(address)} as an IP address.")
    return legacy


def _not_public(ip: _IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        # Packets to these reach the embedded IPv4 address, so that address decides.
        if ip.ipv4_mapped is not None:
            return _not_public(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            return _not_public(ip.sixtofour)
        if ip in _NAT64:
            return _not_public(ipaddress.IPv4Address(ip.packed[-4:]))
        if ip in _NAT64_LOCAL:
            return True
    if ip.is_multicast:
        return False
    return (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_reserved
            or ip in _SHARED_SPACE)


def ip_is_private(address: str) -> bool:
    """True when ``address`` is not publicly routable; multicast counts as not private.

    True for private (RFC 1918, ``fc00::/7``), loopback, link-local, unspecified, reserved
    and documentation ranges (everything ``ipaddress`` calls private or reserved) and the
    shared address space ``100.64.0.0/10``.  Multicast is False: it is a delivery mode,
    not a place, and no TCP request reaches it.  IPv6 that carries an IPv4 address the
    packet ends up at is judged by that address: IPv4-mapped ``::ffff:10.0.0.1``, 6to4
    ``2002::/16`` and NAT64 ``64:ff9b::/96``; local-use NAT64 ``64:ff9b:1::/48`` is True.

    Brackets (``[::1]``) and an IPv6 zone (``fe80::1%eth0``) are accepted.  Because curl,
    browsers and ``inet_aton`` read them, the legacy IPv4 forms are read too: ``127.1``,
    ``0x7f.0.0.1``, ``0177.0.0.1``, ``2130706433`` and ``0x7f000001`` are all 127.0.0.1
    (so ``010.0.0.1`` is the octal 8.0.0.1, not 10.0.0.1).  Raises EvaluationError for
    anything that is not an IP address (``localhost``, a domain, the empty string).

    >>> ip_is_private("10.1.2.3"), ip_is_private("8.8.8.8"), ip_is_private("[::1]")
    (True, False, True)
    >>> ip_is_private("0x7f.1"), ip_is_private("::ffff:192.168.0.1"), ip_is_private("100.64.0.1")
    (True, True, True)
    >>> ip_is_private("224.0.0.1")
    False
    >>> ip_is_private("localhost")
    Traceback (most recent call last):
    ...
    toolform_rules.errors.EvaluationError: ip_is_private() cannot read 'localhost' as an IP address.
    """
    return _not_public(_read_ip(address))
