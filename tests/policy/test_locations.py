"""The location functions of the policy language: tables of tricks, then properties on
generated input, then inputs large enough to expose anything that is not linear."""

from __future__ import annotations

import ipaddress
import unicodedata
import urllib.parse
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolform_rules.errors import EvaluationError
from toolform_rules.policy.locations import email_domain, ip_is_private, path_within, url_host, url_scheme

# ----------------------------------------------------------------------------- path_within

PATH_CASES = [
    # The table the policy language promises.
    pytest.param("a/../../etc", "/srv/data", False, id="relative-climbs-out"),
    pytest.param("/srv/data/../etc", "/srv/data", False, id="absolute-climbs-out"),
    pytest.param("/srv/data//x", "/srv/data", True, id="double-separator"),
    pytest.param("./x", "/srv/data", True, id="dot-prefix"),
    pytest.param("/srv/data/./x/", "/srv/data/", True, id="dot-and-trailing-slashes"),
    pytest.param("/srv/data", "/srv/data", True, id="root-is-within-itself"),
    pytest.param("/srv/database/x", "/srv/data", False, id="string-prefix-is-not-component-prefix"),
    pytest.param("//etc/passwd", "/srv/data", False, id="leading-double-slash-is-slash"),
    pytest.param("/srv/data/%2e%2e/etc", "/srv/data", False, id="percent-dots"),
    pytest.param("..%2f..%2fetc", "/srv/data", False, id="percent-slash"),
    pytest.param("x/%252e%252e/%252e%252e/y", "/srv/data", False, id="double-percent-encoding"),
    pytest.param("x\\..\\..\\y", "/srv/data", False, id="backslash-separators"),
    pytest.param("/srv/data/ｘ/．．/．．/etc", "/srv/data", False, id="fullwidth-dots"),
    pytest.param("/srv/data/résumé.pdf", "/srv/data", True, id="plain-non-ascii-name"),
    pytest.param("~/x", "/srv/data", False, id="home-expansion"),
    pytest.param("", "/srv/data", False, id="empty"),
    pytest.param("/srv/data/a\x00b", "/srv/data", False, id="nul"),
    pytest.param("/../srv/data/x", "/srv/data", True, id="dotdot-at-slash-stays"),
    pytest.param("x/y/../z", "data", True, id="relative-root"),
    pytest.param("../data/x", "data", True, id="relative-root-lexical-reentry"),
    # Our own.
    pytest.param("/srv/data/..", "/srv/data", False, id="trailing-dotdot"),
    pytest.param("/srv/data/x/..", "/srv/data", True, id="trailing-dotdot-back-to-root"),
    pytest.param("/srv/data/x/../", "/srv/data", True, id="trailing-dotdot-slash"),
    pytest.param("/srv/data/...", "/srv/data", True, id="three-dots-is-a-name"),
    pytest.param("/srv/data/.../x", "/srv/data", True, id="three-dots-directory"),
    pytest.param("/srv/data/..x", "/srv/data", True, id="dotdot-prefixed-name"),
    pytest.param("/srv/data\\..\\etc", "/srv/data", False, id="mixed-separators"),
    pytest.param("/srv\\data/x", "/srv/data", True, id="mixed-separators-within"),
    pytest.param("a/b/c/../../../..", "/srv/data", False, id="one-dotdot-too-many"),
    pytest.param("a/b/c/../../..", "/srv/data", True, id="dotdots-exactly-back"),
    pytest.param("/SRV/DATA/x", "/srv/data", False, id="case-sensitive"),
    pytest.param("/srv/data/x", "/srv/data/x/y", False, id="parent-of-root"),
    pytest.param("/srv/data/x", "/", True, id="slash-root"),
    pytest.param("x", "/", True, id="slash-root-relative-path"),
    pytest.param("/srv/data/x", "data", False, id="absolute-path-relative-root"),
    pytest.param("../../x", "../data", False, id="relative-root-with-dotdot-out"),
    pytest.param("x/../y", "../data", True, id="relative-root-with-dotdot-in"),
    pytest.param("/srv/data/%2E%2E", "/srv/data", False, id="uppercase-escapes"),
    pytest.param("/srv/data/a/%2e%2e%5cx", "/srv/data", True, id="percent-backslash-stays-inside"),
    pytest.param("/srv/data/%2e%2e%5cx", "/srv/data", False, id="percent-backslash-climbs-one"),
    pytest.param("/srv/data/x/%2e%2e%5c%2e%2e%5cetc", "/srv/data", False, id="percent-backslash-climbs"),
    pytest.param("%2fetc%2fpasswd", "/srv/data", False, id="percent-slash-makes-absolute"),
    pytest.param("/srv/data/%25252e%25252e", "/srv/data", False, id="triple-percent-encoding"),
    pytest.param("/srv/data/%2525252e", "/srv/data", False, id="quadruple-percent-never-settles"),
    pytest.param("/srv/data/100%25.txt", "/srv/data", True, id="honest-percent-escape"),
    pytest.param("/srv/data/50%off", "/srv/data", True, id="bare-percent"),
    pytest.param("/srv/data/%", "/srv/data", True, id="lone-percent"),
    pytest.param("/srv/data/%c0%ae%c0%ae/x", "/srv/data", False, id="overlong-utf8-dot"),
    pytest.param("/srv/data/%ff", "/srv/data", False, id="invalid-utf8-escape"),
    pytest.param("/srv/data/caf%c3%a9", "/srv/data", True, id="utf8-escape"),
    pytest.param("/srv/data/%00", "/srv/data", False, id="percent-nul"),
    pytest.param("/srv/data/x\n", "/srv/data", False, id="newline"),
    pytest.param("/srv/data/x\x7f", "/srv/data", False, id="del"),
    pytest.param("/srv/data/x\x85", "/srv/data", False, id="c1-control"),
    pytest.param("/srv/data/x/\u2025/\u2025/etc", "/srv/data", False, id="two-dot-leader"),
    pytest.param("/srv/data/x/\ufe52\ufe52/\ufe52\ufe52/etc", "/srv/data", False, id="small-full-stop"),
    pytest.param("/srv/data/x/\u2024\u2024/\u2024\u2024/etc", "/srv/data", False, id="one-dot-leader"),
    pytest.param("/srv/data/x\uff0f..\uff0f..\uff0fetc", "/srv/data", False, id="fullwidth-solidus"),
    pytest.param("/srv/data/x\uff3c..\uff3c..\uff3cetc", "/srv/data", False, id="fullwidth-reverse-solidus"),
    pytest.param("/srv/data/x\u2215..\u2215..\u2215etc", "/srv/data", False, id="division-slash"),
    pytest.param("/srv/data/x\u2044..\u2044..\u2044etc", "/srv/data", False, id="fraction-slash"),
    pytest.param("/srv/data/\uff05\uff12\uff45\uff05\uff12\uff45", "/srv/data", False,
                 id="fullwidth-percent-escape"),
    pytest.param("/srv/data/x/\uff05\uff12\uff45\uff05\uff12\uff45/y", "/srv/data", True,
                 id="fullwidth-percent-escape-inside"),
    pytest.param("/srv/data/x/%ef%bc%8e%ef%bc%8e/%ef%bc%8e%ef%bc%8e/etc", "/srv/data", False,
                 id="percent-encoded-fullwidth-dots"),
    pytest.param("/srv/data/x/%25ef%25bc%258e%25ef%25bc%258e/..", "/srv/data", False,
                 id="double-encoded-fullwidth-dots-then-dotdot"),
    pytest.param("/srv/data/x/y/%25ef%25bc%258e%25ef%25bc%258e/..", "/srv/data", True,
                 id="double-encoded-fullwidth-dots-stays-inside"),
    pytest.param("/srv/data/x/.. /.. /etc", "/srv/data", False, id="windows-trailing-space-dotdot"),
    pytest.param("/srv/data/x/.. ./etc", "/srv/data", False, id="windows-dots-and-spaces"),
    pytest.param("/srv/data/ x /", "/srv/data", True, id="spaces-around-a-name"),
    pytest.param("/srv/data/\ud800", "/srv/data", True, id="lone-surrogate-name"),
    pytest.param("~", "/srv/data", False, id="bare-tilde"),
    pytest.param("%7e/x", "/srv/data", False, id="percent-tilde"),
    pytest.param("\uff5e/x", "/srv/data", False, id="fullwidth-tilde"),
    pytest.param("/srv/data/~x", "/srv/data", True, id="tilde-inside-a-name"),
    pytest.param("C:\\srv\\data\\x", "/srv/data", False, id="drive-path-posix-root"),
    pytest.param("C:x", "/srv/data", False, id="drive-relative"),
    pytest.param("c:/srv/data", "/srv/data", False, id="drive-path-forward-slashes"),
    pytest.param("\\\\server\\share\\x", "/srv/data", False, id="unc"),
    pytest.param("\\\\?\\C:\\x", "/srv/data", False, id="device-path"),
    pytest.param("/\\server\\share", "/srv/data", False, id="mixed-unc"),
    pytest.param("C:\\Users\\bob\\x.txt", "C:\\Users\\bob", True, id="same-drive"),
    pytest.param("c:/Users/bob/x.txt", "C:\\Users\\bob", True, id="same-drive-other-case-and-slashes"),
    pytest.param("D:\\Users\\bob\\x.txt", "C:\\Users\\bob", False, id="other-drive"),
    pytest.param("C:\\Users\\bob\\..\\eve", "C:\\Users\\bob", False, id="same-drive-climbs"),
    pytest.param("x.txt", "C:\\Users\\bob", True, id="relative-under-drive-root"),
    pytest.param("\\Users\\bob\\x.txt", "C:\\Users\\bob", False, id="driveless-absolute-drive-root"),
    pytest.param("file:///srv/data/x", "/srv/data", False, id="file-url"),
    pytest.param("http://x/y", "/srv/data", False, id="http-url"),
    pytest.param("a:b/c", "/srv/data", False, id="single-letter-drive-lookalike"),
    pytest.param("notes.txt:stream", "/srv/data", True, id="colon-later-in-name"),
    pytest.param("/srv/data/" + "a/" * 10_000 + "x", "/srv/data", True, id="deep-path"),
    pytest.param("/srv/data/" + "a/" * 10_000 + "../" * 10_001, "/srv/data", False, id="deep-climb"),
    pytest.param("/" * 100_000, "/", True, id="slashes-only-slash-root"),
]


@pytest.mark.parametrize(("path", "root", "expected"), PATH_CASES)
def test_path_within(path: str, root: str, expected: bool) -> None:
    assert path_within(path, root) is expected


@pytest.mark.parametrize("root", [
    pytest.param("/srv/data/", id="trailing-slash"),
    pytest.param("/srv//data", id="double-slash"),
    pytest.param("/srv/./data", id="dot"),
    pytest.param("/srv/x/../data", id="dotdot"),
    pytest.param("\\srv\\data", id="backslashes"),
    pytest.param("//srv/data//", id="leading-double-slash"),
])
def test_roots_are_normalised_the_same_way(root: str) -> None:
    assert path_within("/srv/data/x", root)
    assert not path_within("/srv/database/x", root)
    assert not path_within("/srv/x", root)


@pytest.mark.parametrize("root", [
    pytest.param("", id="empty"),
    pytest.param("~/data", id="home"),
    pytest.param("/srv/da\x00ta", id="nul"),
    pytest.param("C:data", id="drive-relative"),
    pytest.param("\\\\server\\share", id="unc"),
    pytest.param("file:///srv", id="url"),
    pytest.param("/srv/my%20data", id="percent-escape"),
    pytest.param("/srv/%c0%ae", id="invalid-utf8-escape"),
    pytest.param("/srv/\uff44ata", id="not-nfkc"),
    pytest.param("/srv/.. /x", id="dots-and-spaces"),
])
def test_unusable_roots_raise(root: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        path_within("x", root)
    assert caught.value.kind == "value"
    assert "path_within()" in str(caught.value)


# ----------------------------------------------------------------------------- email_domain

EMAIL_CASES = [
    pytest.param("Alice <Alice@Corp.Example>", "corp.example", id="display-form"),
    pytest.param("alice@corp.example", "corp.example", id="plain"),
    pytest.param("  alice@corp.example\n", "corp.example", id="surrounding-whitespace"),
    pytest.param('"a@b"@evil.example', "evil.example", id="quoted-local-with-at"),
    pytest.param("alice@corp.example@evil.example", "evil.example", id="last-at-wins"),
    pytest.param("alice@corp.example.", "corp.example", id="trailing-dot"),
    pytest.param("bob@[192.0.2.1]", "[192.0.2.1]", id="ipv4-literal"),
    pytest.param("bob@[IPv6:2001:DB8::1]", "[ipv6:2001:db8::1]", id="ipv6-literal"),
    pytest.param('"Doe, John" <john@corp.example>', "corp.example", id="quoted-comma-in-display"),
    pytest.param('"alice@corp.example" <x@evil.example>', "evil.example", id="display-name-spoof"),
    pytest.param("<alice@corp.example>", "corp.example", id="angle-only"),
    pytest.param("Alice < alice@corp.example >", "corp.example", id="spaces-inside-angles"),
    pytest.param("a@Bücher.Example", "bücher.example", id="idn"),
    pytest.param("a@\uff45\uff56\uff49\uff4c\uff0e\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45", "evil.example",
                 id="fullwidth-domain-folds"),
    pytest.param("a@evil\u3002example", "evil.example", id="ideographic-full-stop"),
    pytest.param("a@corp.example\u3002", "corp.example", id="ideographic-trailing-dot"),
    pytest.param("a@xn--bcher-kva.example", "xn--bcher-kva.example", id="punycode"),
    pytest.param("a@localhost", "localhost", id="single-label"),
    # NFKC runs first, as in a mail system that normalises: the fullwidth @ is an @.
    pytest.param("alice\uff20evil.example", "evil.example", id="fullwidth-at-only"),
    pytest.param("alice@corp.example\uff20evil.example", "evil.example", id="fullwidth-at-in-domain"),
]


@pytest.mark.parametrize(("address", "expected"), EMAIL_CASES)
def test_email_domain(address: str, expected: str) -> None:
    assert email_domain(address) == expected


@pytest.mark.parametrize("address", [
    pytest.param("alice", id="no-at"),
    pytest.param("@corp.example", id="empty-local"),
    pytest.param("alice@", id="empty-domain"),
    pytest.param("alice@.", id="only-a-dot"),
    pytest.param("", id="empty"),
    pytest.param("a@corp.example, b@evil.example", id="two-recipients-comma"),
    pytest.param("a@corp.example;b@evil.example", id="two-recipients-semicolon"),
    pytest.param("a@corp.example b@evil.example", id="two-recipients-space"),
    pytest.param("a@corp.example\nBcc: b@evil.example", id="header-injection"),
    pytest.param("a@corp.example\x00", id="nul"),
    pytest.param("Doe, John <john@corp.example>", id="unquoted-comma-in-display"),
    pytest.param("a@evil.example <b@corp.example>", id="address-in-display"),
    pytest.param("<a@evil.example>, <b@corp.example>", id="two-angle-addresses"),
    pytest.param('"unclosed <a@corp.example>', id="unclosed-quote"),
    pytest.param("alice@corp.example>", id="close-without-open"),
    pytest.param("alice@corp_example", id="underscore"),
    pytest.param("alice@corp.example(comment)", id="comment"),
    pytest.param("alice@corp..example", id="empty-label"),
    pytest.param("alice@.corp.example", id="leading-dot"),
    pytest.param("alice@corp.example..", id="two-trailing-dots"),
    pytest.param("alice@[not-an-ip]", id="bad-literal"),
    pytest.param("alice@[::1]", id="untagged-ipv6-literal"),
    pytest.param("alice@[IPv6:fe80::1%eth0]", id="zone-in-literal"),
    pytest.param("alice@corp.example\u200d", id="zero-width-joiner"),
])
def test_email_domain_refuses(address: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        email_domain(address)
    assert caught.value.kind == "value"
    assert str(caught.value).startswith("email_domain() ")


# ----------------------------------------------------------------------------- url_scheme

@pytest.mark.parametrize(("url", "expected"), [
    pytest.param("HTTPS://x", "https", id="upper-case"),
    pytest.param("  http://x  ", "http", id="surrounding-spaces"),
    pytest.param("\x00\x1fjava\tscr\nipt:alert(1)", "javascript", id="controls-and-tabs"),
    pytest.param("mailto:a@b", "mailto", id="mailto"),
    pytest.param("git+ssh://x", "git+ssh", id="plus"),
    pytest.param("C:\\x", "c", id="drive-letter-reads-as-scheme"),
    pytest.param("localhost:8080", "localhost", id="host-port-reads-as-scheme"),
])
def test_url_scheme(url: str, expected: str) -> None:
    assert url_scheme(url) == expected


@pytest.mark.parametrize("url", [
    pytest.param("corp.example/x", id="no-scheme"),
    pytest.param("/path", id="path"),
    pytest.param("//host/x", id="scheme-relative"),
    pytest.param(":x", id="empty-scheme"),
    pytest.param("1http://x", id="starts-with-digit"),
    pytest.param("ht tp://x", id="space-in-scheme"),
    pytest.param("\uff48ttp://x", id="fullwidth-scheme"),
    pytest.param("", id="empty"),
])
def test_url_scheme_refuses(url: str) -> None:
    with pytest.raises(EvaluationError, match=r"^url_scheme\(\) "):
        url_scheme(url)


# ----------------------------------------------------------------------------- url_host

URL_HOST_CASES = [
    pytest.param("http://corp.example/x", "corp.example", id="plain"),
    pytest.param("HTTPS://Corp.Example:8443/x", "corp.example", id="case-and-port"),
    pytest.param("http://corp.example./", "corp.example", id="trailing-dot"),
    pytest.param("http://corp.example@evil.example/", "evil.example", id="userinfo-is-not-host"),
    pytest.param("http://a@b@evil.example/", "evil.example", id="last-at"),
    pytest.param("http://corp.example:80@evil.example/", "evil.example", id="port-like-userinfo"),
    pytest.param("http://user:pa:ss@corp.example:80/", "corp.example", id="colons-in-userinfo"),
    pytest.param("http://corp.example?@evil.example/", "corp.example", id="query-ends-authority"),
    pytest.param("http://corp.example#@evil.example/", "corp.example", id="fragment-ends-authority"),
    pytest.param("http://corp.example/@evil.example/", "corp.example", id="path-ends-authority"),
    pytest.param("http://corp.example\\x", "corp.example", id="backslash-path"),
    pytest.param("http:\\\\corp.example\\x", "corp.example", id="backslash-slashes"),
    pytest.param("//corp.example/x", "corp.example", id="scheme-relative"),
    pytest.param("\\\\corp.example\\x", "corp.example", id="scheme-relative-backslashes"),
    pytest.param("/\\evil.example/x", "evil.example", id="slash-backslash-redirect"),
    pytest.param("http://[::1]:8080/", "::1", id="ipv6"),
    pytest.param("http://[0:0::1]/", "::1", id="ipv6-compressed"),
    pytest.param("http://[::FFFF:127.0.0.1]/", "::ffff:7f00:1", id="ipv6-mapped"),
    pytest.param("http://%65vil.example", "evil.example", id="percent-host"),
    pytest.param("http://evil%2eexample/", "evil.example", id="percent-dot"),
    pytest.param("http://\uff45vil.example/", "evil.example", id="fullwidth-host"),
    pytest.param("http://0x7f.1/", "127.0.0.1", id="legacy-ipv4-hex"),
    pytest.param("http://2130706433/", "127.0.0.1", id="legacy-ipv4-integer"),
    pytest.param("http://0177.0.0.1/", "127.0.0.1", id="legacy-ipv4-octal"),
    pytest.param("http://127.0.0.1./", "127.0.0.1", id="ipv4-trailing-dot"),
    pytest.param(" \thttp://corp.ex\nample/ ", "corp.example", id="whatwg-strip-and-remove"),
    pytest.param("ssh://git@corp.example:22/repo", "corp.example", id="non-special-scheme"),
    pytest.param("ftp://corp.example:/x", "corp.example", id="empty-port"),
    pytest.param("http://corp.example:00080/", "corp.example", id="leading-zero-port"),
    pytest.param("http://my_host.internal/", "my_host.internal", id="underscore"),
    pytest.param("http://bücher.example/", "bücher.example", id="idn-stays-unicode"),
    pytest.param("file://server/share/x", "server", id="file-host"),
]


@pytest.mark.parametrize(("url", "expected"), URL_HOST_CASES)
def test_url_host(url: str, expected: str) -> None:
    assert url_host(url) == expected


@pytest.mark.parametrize("url", [
    pytest.param("mailto:x@y", id="mailto"),
    pytest.param("corp.example/x", id="no-scheme"),
    pytest.param("localhost:8080/x", id="host-port-without-scheme"),
    pytest.param("http:corp.example", id="special-without-slashes"),
    pytest.param("http:///corp.example", id="three-slashes-empty-host"),
    pytest.param("file:///etc/passwd", id="file-empty-host"),
    pytest.param("file://C:/x", id="file-drive"),
    pytest.param("http://", id="nothing"),
    pytest.param("http://user@/x", id="userinfo-only"),
    pytest.param("http://:80/", id="port-only"),
    pytest.param("http://corp.example:http/", id="port-not-digits"),
    pytest.param("http://corp.example:65536/", id="port-too-large"),
    pytest.param("http://corp.example:\uff18\uff10/", id="fullwidth-port"),
    pytest.param("http://corp.example:80:80/", id="two-ports"),
    pytest.param("http://a b/", id="space"),
    pytest.param("http://a%20b/", id="percent-space"),
    pytest.param("http://a%2fb/", id="percent-slash"),
    pytest.param("http://a%40b/", id="percent-at"),
    pytest.param("http://a%2525b/", id="double-percent-leaves-percent"),
    pytest.param("http://a%ff/", id="invalid-utf8"),
    pytest.param("http://a<b>/", id="angle-brackets"),
    pytest.param("http://a^b/", id="caret"),
    pytest.param("http://a|b/", id="pipe"),
    pytest.param("http://a..b/", id="empty-label"),
    pytest.param("http://corp.example../", id="two-trailing-dots"),
    pytest.param("http://1.2.3.4.5/", id="too-many-ipv4-parts"),
    pytest.param("http://foo.09/", id="bad-octal-last-label"),
    pytest.param("http://256.256.256.256/", id="ipv4-out-of-range"),
    pytest.param("http://[::1/", id="unclosed-bracket"),
    pytest.param("http://[::1]x/", id="text-after-bracket"),
    pytest.param("http://[corp.example]/", id="bracketed-name"),
    pytest.param("http://[fe80::1%25eth0]/", id="ipv6-zone"),
    pytest.param("http://ev\u00adil.example/", id="soft-hyphen"),
    pytest.param("http://evil.example\\@corp.example/", id="backslash-userinfo-browser-evil"),
    pytest.param("http://corp.example\\@evil.example/", id="backslash-userinfo-urllib-evil"),
    pytest.param("//corp.example\\@evil.example/", id="backslash-userinfo-scheme-relative"),
    pytest.param("ssh://corp.example\\@evil.example/", id="backslash-userinfo-non-special"),
    pytest.param("ssh://corp.example\\x/", id="backslash-in-non-special-host"),
    pytest.param("", id="empty"),
])
def test_url_host_refuses(url: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        url_host(url)
    assert caught.value.kind == "value"
    assert str(caught.value).startswith("url_host() ")


@pytest.mark.parametrize("url", [
    "http://corp.example/x", "https://Corp.Example:8443/a?b#c", "http://alice@corp.example/",
    "http://corp.example@evil.example/", "http://a:b@evil.example:1/", "ftp://files.corp.example/",
    "ws://[2001:db8::1]:80/", "http://192.0.2.1/", "ssh://git@corp.example/repo",
    "http://corp.example?@evil.example/", "http://corp.example#@evil.example/",
])
def test_url_host_agrees_with_urllib_where_urllib_is_right(url: str) -> None:
    assert url_host(url) == urllib.parse.urlsplit(url).hostname


def test_urllib_misreads_the_backslash_which_is_why_we_refuse() -> None:
    url = "http://corp.example\\@evil.example/"
    assert urllib.parse.urlsplit(url).hostname == "evil.example"
    with pytest.raises(EvaluationError, match="disagree"):
        url_host(url)


# ----------------------------------------------------------------------------- ip_is_private

IP_CASES = [
    pytest.param("10.1.2.3", True, id="rfc1918-10"),
    pytest.param("172.16.0.1", True, id="rfc1918-172"),
    pytest.param("172.32.0.1", False, id="just-outside-172"),
    pytest.param("192.168.1.1", True, id="rfc1918-192"),
    pytest.param("127.0.0.1", True, id="loopback"),
    pytest.param("169.254.169.254", True, id="link-local-metadata"),
    pytest.param("0.0.0.0", True, id="unspecified"),
    pytest.param("100.64.0.1", True, id="shared-space"),
    pytest.param("100.127.255.255", True, id="shared-space-end"),
    pytest.param("100.128.0.0", False, id="after-shared-space"),
    pytest.param("240.0.0.1", True, id="reserved"),
    pytest.param("255.255.255.255", True, id="broadcast"),
    pytest.param("192.0.2.1", True, id="documentation"),
    pytest.param("8.8.8.8", False, id="public"),
    pytest.param("224.0.0.1", False, id="multicast-v4"),
    pytest.param("239.255.255.250", False, id="admin-scoped-multicast"),
    pytest.param("ff02::1", False, id="multicast-v6"),
    pytest.param("::1", True, id="loopback-v6"),
    pytest.param("[::1]", True, id="brackets"),
    pytest.param("::", True, id="unspecified-v6"),
    pytest.param("fe80::1", True, id="link-local-v6"),
    pytest.param("fe80::1%eth0", True, id="zone"),
    pytest.param("[fe80::1%eth0]", True, id="zone-in-brackets"),
    pytest.param("fd12:3456::1", True, id="unique-local"),
    pytest.param("2606:4700::1111", False, id="public-v6"),
    pytest.param("::ffff:10.0.0.1", True, id="mapped-private"),
    pytest.param("::ffff:127.0.0.1", True, id="mapped-loopback"),
    pytest.param("::ffff:8.8.8.8", False, id="mapped-public"),
    pytest.param("::ffff:7f00:1", True, id="mapped-hex"),
    pytest.param("2002:7f00:1::", True, id="6to4-loopback"),
    pytest.param("2002:0808:0808::1", False, id="6to4-public"),
    pytest.param("64:ff9b::10.0.0.1", True, id="nat64-private"),
    pytest.param("64:ff9b::8.8.8.8", False, id="nat64-public"),
    pytest.param("64:ff9b:1::8.8.8.8", True, id="nat64-local-use"),
    pytest.param("127.1", True, id="legacy-two-parts"),
    pytest.param("0x7f.0.0.1", True, id="legacy-hex-part"),
    pytest.param("0177.0.0.1", True, id="legacy-octal-part"),
    pytest.param("2130706433", True, id="legacy-integer"),
    pytest.param("0x7f000001", True, id="legacy-hex-integer"),
    pytest.param("0X7F000001", True, id="legacy-hex-upper"),
    pytest.param("10.0.0.1.", True, id="trailing-dot"),
    pytest.param("010.0.0.1", False, id="leading-zero-is-octal-8"),
    pytest.param("0x08080808", False, id="legacy-public"),
    pytest.param("167772161", True, id="legacy-integer-10-0-0-1"),
    pytest.param("0", True, id="zero"),
    pytest.param("0x", True, id="bare-hex-prefix-is-zero"),
    pytest.param("10.65535", True, id="legacy-last-part-16-bits"),
]


@pytest.mark.parametrize(("address", "expected"), IP_CASES)
def test_ip_is_private(address: str, expected: bool) -> None:
    assert ip_is_private(address) is expected


@pytest.mark.parametrize("address", [
    pytest.param("localhost", id="name"),
    pytest.param("corp.example", id="domain"),
    pytest.param("", id="empty"),
    pytest.param("1.2.3.4.5", id="five-parts"),
    pytest.param("256.0.0.1", id="part-too-large"),
    pytest.param("1.2.3.256", id="last-part-too-large"),
    pytest.param("4294967296", id="integer-too-large"),
    pytest.param("08.0.0.1", id="bad-octal"),
    pytest.param("0xg.0.0.1", id="bad-hex"),
    pytest.param("1..2", id="empty-part"),
    pytest.param(" 10.0.0.1", id="leading-space"),
    pytest.param("10.0.0.1/8", id="network"),
    pytest.param("\uff11\uff10.0.0.1", id="fullwidth-digits"),
    pytest.param("::g", id="bad-ipv6"),
    pytest.param("fe80::1%", id="empty-zone"),
    pytest.param("fe80::1%eth 0", id="zone-with-space"),
    pytest.param("::ffff:127.1", id="legacy-in-mapped"),
    pytest.param("[10.0.0.1", id="unclosed-bracket"),
    pytest.param("9" * 5000, id="huge-decimal"),
])
def test_ip_is_private_refuses(address: str) -> None:
    with pytest.raises(EvaluationError) as caught:
        ip_is_private(address)
    assert caught.value.kind == "value"
    assert str(caught.value).startswith("ip_is_private() ")


# ----------------------------------------------------------------------------- messages

def test_messages_name_the_function_and_a_truncated_value() -> None:
    value = "x" * 500
    for function in (email_domain, url_host, url_scheme, ip_is_private):
        with pytest.raises(EvaluationError) as caught:
            function(value)
        message = str(caught.value)
        assert message.startswith(f"{function.__name__}() ") and "'xxx" in message
        assert len(message) < 250 and "\n" not in message


# ----------------------------------------------------------------------------- properties

HOSTILE_TOKENS = ["/", "\\", ".", "..", "%", "%2e", "%2f", "%25", "%5c", "%c0%ae", "~", "@", ":", "[", "]",
                  "a", "0", "x7f", " ", "\x00", "\t", "\uff0e", "\uff0f", "\u2025", "\ufe52", "\ud800", "<", ">",
                  ",", '"', "http://", "//", "::", "ffff", "127", "0x"]
HOSTILE = (st.text()
           | st.text(alphabet="./\\%~@:[]")
           | st.lists(st.sampled_from(HOSTILE_TOKENS), max_size=30).map("".join))


def _returns_or_refuses(function: Callable[..., object], expected: type, *args: str) -> None:
    try:
        result = function(*args)
    except EvaluationError as err:
        assert err.kind == "value"
    else:
        assert type(result) is expected


@given(path=HOSTILE, root=HOSTILE | st.sampled_from(["/srv/data", "data", "/", "C:\\work"]))
def test_path_within_returns_a_bool_or_refuses_the_root(path: str, root: str) -> None:
    _returns_or_refuses(path_within, bool, path, root)


@given(text=HOSTILE)
def test_email_domain_returns_a_string_or_refuses(text: str) -> None:
    _returns_or_refuses(email_domain, str, text)


@given(text=HOSTILE | HOSTILE.map(lambda rest: "http://" + rest))
def test_url_host_returns_a_string_or_refuses(text: str) -> None:
    _returns_or_refuses(url_host, str, text)


@given(text=HOSTILE)
def test_url_scheme_returns_a_string_or_refuses(text: str) -> None:
    _returns_or_refuses(url_scheme, str, text)


@given(text=HOSTILE)
def test_ip_is_private_returns_a_bool_or_refuses(text: str) -> None:
    _returns_or_refuses(ip_is_private, bool, text)


# Everything path_within may split on (its look-alike separators included).
SEPARATOR_CHARS = "/\\\u2216\u29f5\u29f9\ufe68\uff3c\u2044\u2215\u29f8\uff0f"


def _safe_name(name: str) -> bool:
    return (name not in (".", "..")
            and not any(ch in SEPARATOR_CHARS or ch in "%:" or unicodedata.category(ch) == "Cc" for ch in name)
            and not name.startswith("~")
            and bool(name.strip(" ."))
            and unicodedata.normalize("NFKC", name) == name)


SAFE_NAME = st.text(min_size=1, max_size=10).filter(_safe_name)
ROOTS = st.sampled_from(["/srv/data", "/", "data", "../data", "C:\\work", "/srv/résumé"])


@given(root=ROOTS, names=st.lists(SAFE_NAME, max_size=8))
def test_safe_names_under_the_root_are_within(root: str, names: list[str]) -> None:
    assert path_within(root + "/" + "/".join(names), root)
    if names:
        assert path_within("/".join(names), root)


# ".." at "/" stays at "/", so the filesystem root cannot be left.
@given(root=ROOTS.filter(lambda root: root != "/"), names=st.lists(SAFE_NAME, max_size=8))
def test_one_dotdot_too_many_leaves_the_root(root: str, names: list[str]) -> None:
    assert not path_within("/".join(names + [".."] * (len(names) + 1)), root)


PATH_PARTS = st.lists(SAFE_NAME | st.sampled_from([".", ".."]), min_size=1, max_size=8)


@given(root=ROOTS, parts=PATH_PARTS, absolute=st.booleans(), prefix=st.sampled_from(["", "/srv/data/"]))
def test_separators_dots_and_trailing_slashes_change_nothing(root: str, parts: list[str], absolute: bool,
                                                             prefix: str) -> None:
    path = ("/" if absolute else "") + prefix.lstrip("/") + "/".join(parts)
    expected = path_within(path, root)
    variants = [
        path.replace("/", "//"),
        path.replace("/", "/./"),
        path + "/",
        path.replace("/", "\\"),
        path if absolute else "./" + path,
    ]
    for variant in variants:
        assert path_within(variant, root) is expected, variant


SHARED = ipaddress.IPv4Network("100.64.0.0/10")


def _expected_private(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Straight from ipaddress: the embedded IPv4 address decides where there is one."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        elif ip.sixtofour:
            ip = ip.sixtofour
        elif ip in ipaddress.IPv6Network("64:ff9b::/96"):
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        elif ip in ipaddress.IPv6Network("64:ff9b:1::/48"):
            return True
    if ip.is_multicast:
        return False
    return not ip.is_global or ip.is_reserved or ip.is_loopback or ip.is_link_local or ip in SHARED


@given(ip=st.ip_addresses())
def test_ip_is_private_agrees_with_ipaddress(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    assert ip_is_private(str(ipaddress.ip_address(ip))) is _expected_private(ip)


@given(ip=st.ip_addresses(v=4))
def test_legacy_ipv4_forms_agree_with_dotted(ip: ipaddress.IPv4Address) -> None:
    expected = ip_is_private(str(ip))
    octets = ip.packed
    for form in (str(int(ip)), hex(int(ip)), "0" + oct(int(ip))[2:] if int(ip) else "0",
                 ".".join("0" + oct(o)[2:] for o in octets), ".".join(hex(o) for o in octets),
                 f"{octets[0]}.{int.from_bytes(octets[1:], 'big')}", f"[{ip}]", f"::ffff:{ip}"):
        assert ip_is_private(form) is expected, form


HOST_LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-", min_size=1, max_size=12)


@given(labels=st.lists(HOST_LABEL, min_size=1, max_size=4),
       scheme=st.sampled_from(["http", "https", "ftp", "ws", "ssh", "git+ssh"]),
       user=st.sampled_from(["", "alice@", "a:b@", "corp.example@"]),
       port=st.sampled_from(["", ":80", ":65535", ":"]),
       tail=st.sampled_from(["", "/", "/x?y#z", "?q", "#f"]))
def test_url_host_on_ordinary_urls_agrees_with_urllib(labels: list[str], scheme: str, user: str, port: str,
                                                      tail: str) -> None:
    host = ".".join(labels)
    url = f"{scheme}://{user}{host}{port}{tail}"
    assert url_host(url) == host.lower() == urllib.parse.urlsplit(url).hostname
    assert url_scheme(url) == scheme


@given(local=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._+-", min_size=1, max_size=12),
       labels=st.lists(HOST_LABEL, min_size=1, max_size=4), name=st.sampled_from(["", "Alice ", '"Doe, J" ']))
def test_email_domain_on_ordinary_addresses(local: str, labels: list[str], name: str) -> None:
    domain = ".".join(labels)
    address = f"{name}<{local}@{domain}>" if name else f"{local}@{domain}"
    assert email_domain(address) == domain.lower()


# ----------------------------------------------------------------------------- size

MEGABYTE = 1 << 20


@pytest.mark.parametrize("text", [
    pytest.param("a" * MEGABYTE, id="letters"),
    pytest.param("/" * 100_000, id="slashes"),
    pytest.param("\\" * 100_000, id="backslashes"),
    pytest.param("../" * (MEGABYTE // 3), id="dotdots"),
    pytest.param("%25" * (MEGABYTE // 3), id="percent-escapes"),
    pytest.param("%2e%2e/" * (MEGABYTE // 7), id="encoded-dotdots"),
    pytest.param("\uff0e" * MEGABYTE, id="fullwidth-dots"),
    pytest.param("\ufdfa" * (MEGABYTE // 16), id="nfkc-expands-eighteen-fold"),
    pytest.param("@" * MEGABYTE, id="at-signs"),
    pytest.param("." * MEGABYTE, id="dots"),
    pytest.param(":" * MEGABYTE, id="colons"),
    pytest.param("0" * MEGABYTE, id="zeros"),
    pytest.param("http://" + "a." * (MEGABYTE // 2), id="long-host"),
    pytest.param("http://x:" + "0" * MEGABYTE, id="long-port"),
    pytest.param("<" * MEGABYTE + ">", id="angles"),
    pytest.param('"' * MEGABYTE + "<a@b>", id="quotes"),
])
def test_large_inputs_finish(text: str) -> None:
    _returns_or_refuses(path_within, bool, text, "/srv/data")
    _returns_or_refuses(path_within, bool, "/srv/data/" + text, "/srv/data")
    _returns_or_refuses(email_domain, str, text)
    _returns_or_refuses(email_domain, str, "a@" + text)
    _returns_or_refuses(url_host, str, text)
    _returns_or_refuses(url_host, str, "http://" + text)
    _returns_or_refuses(url_scheme, str, text)
    _returns_or_refuses(ip_is_private, bool, text)


def test_a_long_root_works() -> None:
    root = "/srv/" + "d/" * 100_000
    assert path_within(root + "x", root)
    assert not path_within(root + "../x", root)
