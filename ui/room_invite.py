"""A room's invitation (explorer/rooms/invite.py makes it): the link a phone can open and its QR code, in the
teacher bar's *Invite* popover."""

from __future__ import annotations

import os

import streamlit as st

from explorer.rooms.invite import PUBLIC_ENV, Invite, invite, lan_address, qr_svg

QR_PX = 220                  # a phone scans it from a projector's far wall


def room_invite(code: str) -> Invite:
    """The invitation on this server: EXPLORER_PUBLIC_URL, else the page's address (on localhost: this
    machine's LAN address and the server's port), or why phones cannot reach it."""
    return invite(code, st.context.url, os.environ.get(PUBLIC_ENV), lan_address(),
                  int(st.get_option("server.port")), str(st.get_option("server.address") or ""))


def invite_menu(code: str) -> Invite:
    """The bar's *Invite*: the link and its QR code, or (no phone can open it) why and how to fix it."""
    card = room_invite(code)
    with st.popover("Invite", icon=":material/qr_code_2:" if card.reachable else ":material/wifi_off:"):
        if card.reachable:
            st.markdown("Students open this link, or scan the code:")
            st.code(card.link, language=None)
            # st.image, not st.html: st.html's sanitiser drops inline SVG, which left the popover without its code
            st.image(qr_svg(card.link), width=QR_PX)
            if card.note:
                st.caption(card.note)
        else:   # no QR code of a link no phone can open; the count's row points here
            st.warning(card.note, icon=":material/wifi_off:")
            st.code(card.link, language=None)
            st.caption("This link works on this computer only.")
    return card
