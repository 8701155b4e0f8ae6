"""Who this visitor is, without a login: a random token kept in a cookie of their browser.

Runs record `owner_id()`, a hash of the token, never the token. The cookie survives a reload and is
shared by the tabs of one browser; another browser, or a private window, is another visitor. The token
stays out of the URL, because a shared link must not hand its sender's runs to whoever opens it.
Streamlit reads the cookies a page's connection sent (`st.context.cookies`) but cannot set one, so a
component with nothing on screen writes it in the browser on the visitor's first page (`remember`).
Under AppTest there are no cookies: each AppTest is a visitor of its own (a test may set TOKEN).
"""

from __future__ import annotations

import hashlib
import re
import secrets

import streamlit as st
import streamlit.components.v2 as components

COOKIE = "explorer_owner"
TOKEN = "_owner_token"               # this session's token: the cookie's, or a new one on a first visit
MAX_AGE_S = 400 * 24 * 3600          # the longest a browser keeps a cookie
_VALID = re.compile(r"[A-Za-z0-9_-]{22,64}")
# Written only when the browser has none: two tabs opened together on a first visit keep the first token.
_JS = """
export default function ({ data }) {
  const has = document.cookie.split("; ").some((c) => c.startsWith(data.name + "="));
  if (!has) {
    const secure = location.protocol === "https:" ? "; Secure" : "";
    document.cookie = `${data.name}=${data.token}; path=/; max-age=${data.max_age}; SameSite=Lax${secure}`;
  }
}
"""
_write_cookie = components.component("explorer_owner_cookie", js=_JS)

YOURS, OTHERS, NOBODYS = "yours", "another visitor's", "no owner"
WHOSE_HELP = ("Yours: trained in this browser, so you can delete it. Another visitor's: you can open, compare "
              "and download it, but only they can delete it. No owner: saved from the command line or before "
              "runs had owners; read-only here.")


def token() -> str:
    tok = st.session_state.get(TOKEN)
    if tok is None:
        sent = st.context.cookies.get(COOKIE)
        tok = sent if isinstance(sent, str) and _VALID.fullmatch(sent) else secrets.token_urlsafe(24)
        st.session_state[TOKEN] = tok
    return tok


def id_of(tok: str) -> str:
    """The id runs record for a token: a hash, so meta.json never holds the token itself."""
    return hashlib.sha256(f"explorer-owner:{tok}".encode()).hexdigest()[:32]


def owner_id() -> str:
    """This visitor's id as runs record it."""
    return id_of(token())


def remember() -> None:
    """Keep the token in the browser when its cookie did not come with this page (the first visit)."""
    tok = token()
    if st.context.cookies.get(COOKIE) != tok:
        _write_cookie(key="owner_cookie", data={"name": COOKIE, "token": tok, "max_age": MAX_AGE_S}, height=0)


def whose(owner: str | None) -> str:
    """A run's owner as the app says it: YOURS, OTHERS or NOBODYS."""
    if owner is None:
        return NOBODYS
    return YOURS if owner == owner_id() else OTHERS
