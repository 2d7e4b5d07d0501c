"""The next steps of a Lean search name the bundle as the caller can pass it back: over HTTP they
carried the server's path of its ``--formal-bundle`` (``"bundle": "/srv/.../mathlib"``), which the
server then refused when an agent followed the step, and which showed the layout of its disk."""
from __future__ import annotations

import json

import pytest

from test_web_mcp import mcp_session


def test_followed_as_given_over_mcp_http_and_no_server_path(web, formal_bundle_dir):
    async def work(s):
        r = await s.call_tool("search_formal_math", {"query": "prime two le", "k": 3})
        followed = [await s.call_tool(step["tool"], step["arguments"]) for step in r.structured_content["next"]
                    if step["tool"] in ("get_by_id", "get_dependencies")]
        return r, followed

    r, followed = mcp_session(web.base, work)
    assert not r.is_error and r.structured_content["hits"][0]["id"] == "lean:Nat.Prime.two_le"
    assert str(formal_bundle_dir) not in json.dumps(r.structured_content)
    assert len(followed) >= 2 and all(not f.is_error for f in followed), [f.content for f in followed if f.is_error]
    api = web.get("/api/lean/search", params={"q": "prime two le", "k": 3}).json()
    assert str(formal_bundle_dir) not in json.dumps(api) and all("bundle" not in s["arguments"] for s in api["next"])


def test_a_bundle_named_by_the_caller_is_passed_back_as_named(formal_bundle_dir, monkeypatch):
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    monkeypatch.delenv("MATHLAS_FORMAL_BUNDLE", raising=False)
    got = lean_search(LeanSearchRequest.make("prime two le", 2), str(formal_bundle_dir))
    assert {s.arguments.get("bundle") for s in got.next if s.tool != "verify_formal"} == {str(formal_bundle_dir)}
    monkeypatch.setenv("MATHLAS_FORMAL_BUNDLE", str(formal_bundle_dir))  # the default: no argument needed
    got = lean_search(LeanSearchRequest.make("prime two le", 2))
    assert got.next and all("bundle" not in s.arguments for s in got.next)
    got = lean_search(LeanSearchRequest.make("prime two le", 2), str(formal_bundle_dir))
    assert all("bundle" not in s.arguments for s in got.next)


@pytest.fixture(autouse=True)
def _no_default_bundle_env(monkeypatch):
    monkeypatch.delenv("MATHLAS_BUNDLE", raising=False)
