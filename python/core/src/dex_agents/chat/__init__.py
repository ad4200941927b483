"""The terminal chat and inspect (`dex-agents chat`, `dex-agents inspect`; extra `chat`).

The session logic (`_session`, `_controller`, `_state`, `_timeline`, `_inspect`) does
not render; `_app` and `_render_report` draw it with rich. `demo_agent` is the agent
the chat talks to by default: a scripted model, no key needed.
"""
