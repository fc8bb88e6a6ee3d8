"""``moonriver-play``: play against agents in the browser (or ``--terminal``)."""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import webbrowser

from moonriver_env.agents.registry import SPECS
from moonriver_env.play.session import GameOptions, PlayError, PlaySession
from moonriver_env.training.cli_errors import ArgumentParser


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    p = ArgumentParser(
        prog="moonriver-play",
        description="Play Moon River against agents in the browser (a local server) or in the "
                    "terminal. The options set the first game and the page's new-game form.")
    p.add_argument("--players", type=int, choices=(2, 3, 4), default=2,
                   help="players at the table, 2-4 (default: %(default)s)")
    p.add_argument("--mode", choices=("base", "legends"), default="base",
                   help="base game or Legends of the West (default: %(default)s)")
    p.add_argument("--scenario", type=int, choices=(1, 2, 3, 4), default=None,
                   help="legends scenario (default: drawn at random)")
    p.add_argument("--human", type=int, nargs="*", default=[0], metavar="SEAT",
                   help="human seat(s), 0-based (default: 0; none to watch agents)")
    p.add_argument("--opponents", nargs="+", default=["greedy"], metavar="SPEC",
                   help="agent specs for the other seats, one each or one for all (default: "
                        f"greedy); allowed: {', '.join(SPECS)}")
    p.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free)")
    p.add_argument("--no-browser", action="store_true", help="do not open the page")
    p.add_argument("--terminal", action="store_true",
                   help="play in this terminal instead of the browser")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port, or None when it can."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(infos[0][4])
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    if not 0 <= args.port < 65536:
        parser.error(f"--port must be between 0 and 65535, got {args.port}")
    options = GameOptions(args.players, args.mode, args.scenario, tuple(args.human),
                          tuple(args.opponents), args.seed)
    try:
        first = PlaySession(options)
    except PlayError as exc:
        if args.debug:
            raise
        parser.error(str(exc))
    if args.terminal:
        from moonriver_env.play.terminal import play_terminal

        return play_terminal(first)
    try:
        import uvicorn

        from moonriver_env.play.server import create_app
    except ImportError as exc:
        parser.error(f"the web page needs the play extra (pip install 'moonriver-env[play]'): "
                     f"{exc}")
    if args.port:
        problem = _port_problem(args.host, args.port)
        if problem:
            parser.error(f"cannot listen on {args.host}:{args.port} ({problem}); choose another "
                         "--port (0: any free port) or --host")
    loopback = args.host in ("127.0.0.1", "localhost", "::1")
    app = create_app(options, ["127.0.0.1", "localhost", "[::1]"] if loopback else None)
    app.state.store.add(first)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            threading.Event().wait(0.05)
        port = server.servers[0].sockets[0].getsockname()[1] if server.servers else args.port
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
        url = f"http://{host}:{port}/game/{first.id}"
        print(f"Moon River: {url}  (new game: http://{host}:{port}/ ; Ctrl+C stops)", flush=True)
        if not args.no_browser:
            webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
