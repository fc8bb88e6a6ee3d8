"""``moonriver-play``: play against agents in the browser (or ``--terminal``)."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import math
import os
import socket
import sys
import threading
import webbrowser

import moonriver_env.play.connections as connections
from moonriver_env.agents.registry import SPECS
from moonriver_env.common.cli import ArgumentParser
from moonriver_env.moonriver.backend import BACKENDS, DEFAULT_BACKEND
from moonriver_env.moonriver.rules.scenarios import SCENARIOS
from moonriver_env.play.fair import AGENT_THREADS, agent_threads_problem
from moonriver_env.play.session import MAX_REQUEST_SECONDS, GameOptions, PlayError, PlaySession

PROG = "moonriver-play"
INTERRUPTED = 130  # a shell's status for a command stopped by Ctrl-C (128 + SIGINT)


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    p = ArgumentParser(
        prog=PROG,
        description="Play Moon River against agents in the browser (a local server) or in the "
                    "terminal. The options set the first game and the page's new-game form.")
    p.add_argument("--players", type=int, choices=(2, 3, 4), default=2,
                   help="players at the table, 2-4 (default: %(default)s)")
    p.add_argument("--mode", choices=("base", "legends"), default="base",
                   help="base game or Legends of the West (default: %(default)s)")
    p.add_argument("--scenario", type=int, choices=tuple(SCENARIOS), default=None,
                   help="legends scenario (default: drawn at random)")
    p.add_argument("--human", type=int, nargs="*", default=[0], metavar="SEAT",
                   help="human seat(s), 0-based (default: 0; none to watch agents)")
    p.add_argument("--opponents", nargs="+", default=["greedy"], metavar="SPEC",
                   help="agent specs for the other seats, one each or one for all (default: "
                        f"greedy); allowed: {', '.join(SPECS)}")
    p.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also accept requests that name this host (Host header), besides "
                        "this machine's names and addresses; repeat for more")
    p.add_argument("--data-file", action="append", default=[], metavar="PATH",
                   help="a data file (plots, boards, partners, bonus tiles) that game records "
                        "opened in the page may use; repeat for more (default: only the "
                        "package's data)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free)")
    p.add_argument("--no-browser", action="store_true", help="do not open the page")
    p.add_argument("--terminal", action="store_true",
                   help="play in this terminal instead of the browser")
    p.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                   help="implementation that plays the games and replays: core (compiled, "
                        "fast) or python (the reference engine); both play the same games "
                        "(default: %(default)s, or $MOONRIVER_BACKEND)")
    p.add_argument("--max-connections", type=int, default=None, metavar="N",
                   help="connections open at once; one more closes the longest waiting "
                        "unfinished request (default: half the limit on open files, ulimit -n, "
                        "raised to the hard limit at start; at most "
                        f"{connections.MAX_CONNECTIONS})")
    p.add_argument("--header-timeout", type=float, default=connections.HEADER_TIMEOUT,
                   metavar="SECONDS",
                   help="a request head must arrive within this time of connecting (or of "
                        "the previous response) (default: %(default)g)")
    p.add_argument("--body-timeout", type=float, default=connections.BODY_TIMEOUT,
                   metavar="SECONDS",
                   help="a request body must arrive, and a response be taken, within this "
                        "time (default: %(default)g)")
    p.add_argument("--keep-alive", type=float, default=connections.KEEP_ALIVE, metavar="SECONDS",
                   help="an idle connection is closed after this time (default: %(default)g)")
    p.add_argument("--agent-threads", type=int, default=AGENT_THREADS, metavar="N",
                   help="agents thinking at once, over all games (default: %(default)s)")
    p.add_argument("--agent-threads-per-client", type=int, default=None, metavar="N",
                   help="agents thinking at once for one client address; the threads go to "
                        "waiting clients in turn (default: half of --agent-threads)")
    p.add_argument("--agent-seconds", type=float, default=MAX_REQUEST_SECONDS,
                   metavar="SECONDS",
                   help="the most seconds an agent thinks a decision, whatever its budget in "
                        "simulations or seconds (--opponents' too); 0: no cap "
                        "(default: %(default)g)")
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


def url_host(host: str) -> str:
    """The host part of a URL that reaches a server bound to ``host``."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, extra: list[str]) -> list[str]:
    """Host names a request may name: this machine's, the bound address and ``extra``."""
    names = {"localhost", "127.0.0.1", "::1", host, *extra}
    for name in {socket.gethostname(), socket.getfqdn()}:
        names.add(name)
        with contextlib.suppress(OSError):  # a name that does not resolve adds no address
            names.update(str(info[4][0]).split("%")[0] for info in socket.getaddrinfo(name, None))
    return sorted(n for n in names if n and n not in ("0.0.0.0", "::"))


def server_limits(parser: argparse.ArgumentParser,
                  args: argparse.Namespace) -> connections.ServerLimits:
    """The server's bounds from the options (the descriptor limit raised first)."""
    descriptors = connections.raise_descriptor_limit()
    if args.max_connections is None:
        args.max_connections = connections.default_max_connections(descriptors)
    if args.agent_threads_per_client is None:
        args.agent_threads_per_client = max(1, args.agent_threads // 2)
    problem = (connections.limits_problem(args.max_connections, args.header_timeout,
                                          args.body_timeout, args.keep_alive, descriptors)
               or agent_threads_problem(args.agent_threads, args.agent_threads_per_client))
    if problem:
        parser.error(problem)
    return connections.ServerLimits(args.max_connections, args.header_timeout,
                                    args.body_timeout, args.keep_alive, descriptors)


def main(argv: list[str] | None = None) -> int:
    """Entry point: Ctrl-C stops the server (or the game) with one line, status 130."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # uvicorn shuts down, then raises the Ctrl-C it caught again
        print(f"{PROG}: stopped (Ctrl-C)", file=sys.stderr, flush=True)
        return INTERRUPTED


def _main(argv: list[str] | None) -> int:
    """Parse the options, then play in the terminal or serve the page until stopped."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")
    if not 0 <= args.port < 65536:
        parser.error(f"--port must be between 0 and 65535, got {args.port}")
    for path in args.data_file:
        if not os.path.isfile(path):
            parser.error(f"--data-file {path}: no such file")
    if not (math.isfinite(args.agent_seconds) and args.agent_seconds >= 0):
        parser.error(f"--agent-seconds must be a number of seconds >= 0 (0: no cap), got "
                     f"{args.agent_seconds:g}")
    limits = None if args.terminal else server_limits(parser, args)
    options = GameOptions(args.players, args.mode, args.scenario, tuple(args.human),
                          tuple(args.opponents), args.seed, args.backend, args.agent_seconds)
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

        from moonriver_env.play.server import create_app, host_name
    except ImportError as exc:
        parser.error(f"the web page needs the play extra (pip install 'moonriver-env[play]'): "
                     f"{exc}")
    for name in args.allow_host:
        if not host_name(name):
            parser.error(f"--allow-host {name!r} is not a host name or address (with an "
                         "optional :port), such as play.example or 192.168.1.5")
    if args.port and (problem := _port_problem(args.host, args.port)):
        parser.error(f"cannot listen on {args.host}:{args.port} ({problem}); choose another "
                     "--port (0: any free port) or --host")
    hosts = allowed_hosts(args.host, args.allow_host)
    try:
        app = create_app(options, hosts, args.data_file, agent_threads=args.agent_threads,
                         agent_threads_per_client=args.agent_threads_per_client)
    except ValueError as exc:  # two --opponents files shown alike
        parser.error(str(exc))
    app.state.store.add(first)
    if not is_loopback(args.host):
        print(f"warning: --host {args.host} listens beyond this machine: whoever reaches it can "
              "start games and play them with the agents given here (requests cannot name "
              f"files); requests naming other hosts than {', '.join(hosts)} are refused "
              "(add names with --allow-host)", file=sys.stderr, flush=True)
    assert limits is not None
    server = uvicorn.Server(connections.uvicorn_config(app, args.host, args.port, limits))

    def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            threading.Event().wait(0.05)
        port = server.servers[0].sockets[0].getsockname()[1] if server.servers else args.port
        host = url_host(args.host)
        url = f"http://{host}:{port}/game/{first.id}"
        print(f"Moon River: {url}  (new game: http://{host}:{port}/ ; Ctrl+C stops)", flush=True)
        if not args.no_browser:
            webbrowser.open(url)

    threading.Thread(target=announce, name="moonriver-announce", daemon=True).start()
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
