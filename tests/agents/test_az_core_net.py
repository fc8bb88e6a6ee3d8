"""The search recipe's network evaluated in C++ (``NumpyAZNet.core``): it matches the numpy
forward in every variant, a search run inside the core is the leaves / evaluate loop with it,
and bad weights or calls are refused with clear errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from moonriver_env.agents.az import NumpyAZNet, absolute_shares, shipped_path
from moonriver_env.agents.pretrained import SHAPE_WEIGHT, action_index, read_npz
from moonriver_env.training.variants import ALL_VARIANTS, variant_config

from moonriver_env.moonriver.core import Game, _core
from moonriver_env.moonriver.observation import MODE_ONEHOT, NUM_VARIANT_CODES, PLAYERS_ONEHOT
from moonriver_env.moonriver.search import BatchedSearch


def shipped_arrays() -> dict[str, np.ndarray]:
    return read_npz(shipped_path())[0]


def plain_arrays() -> dict[str, np.ndarray]:
    """The shipped arrays without its variant layers: a network without them."""
    return {k: v for k, v in shipped_arrays().items() if not k.startswith("variant_")}


def shaken_arrays(seed: int) -> dict[str, np.ndarray]:
    """The shipped arrays with every weight moved by noise of its own scale (another network
    of the same shapes, its prior weight included)."""
    rng = np.random.default_rng(seed)
    return {k: (v + rng.normal(0.0, float(np.std(v)) + 0.05, v.shape)).astype(np.float32)
            for k, v in shipped_arrays().items()}


def value_hidden_arrays(seed: int, width: int = 24) -> dict[str, np.ndarray]:
    """The plain arrays with a random value layer of its own (``value_hidden``) of
    ``width``, over the observation after the ranches, the trunk's input and its state, and a
    value head that reads it."""
    rng = np.random.default_rng(seed)
    arrays = plain_arrays()
    hidden, trunk_in = arrays["trunk.0.weight"].shape
    rest = arrays["rest.0.weight"].shape[1]
    arrays["value_hidden.weight"] = rng.normal(0, 0.1, (width, rest + trunk_in + hidden))
    arrays["value_hidden.bias"] = rng.normal(0, 0.1, width)
    arrays["value_head.weight"] = rng.normal(0, 0.3, (4, width))
    return {k: np.asarray(v, np.float32) for k, v in arrays.items()}


def film_arrays(seed: int) -> dict[str, np.ndarray]:
    """The plain arrays with a random ``variant_film`` (each variant's forward another)."""
    arrays = plain_arrays()
    hidden = arrays["trunk.0.bias"].size
    film = np.random.default_rng(seed).normal(0, 0.5, (2 * hidden, NUM_VARIANT_CODES))
    return arrays | {"variant_film.weight": film.astype(np.float32)}


def adapter_arrays(seed: int, rank: int = 3) -> dict[str, np.ndarray]:
    """The plain arrays with random rank-``rank`` variant adapters of the rest and trunk."""
    rng = np.random.default_rng(seed)
    arrays = plain_arrays()
    for layer, name in (("rest.0", "variant_rest"), ("trunk.0", "variant_trunk")):
        outputs, inputs = arrays[f"{layer}.weight"].shape
        arrays[f"{name}.down"] = rng.normal(0, inputs ** -0.5, (NUM_VARIANT_CODES, rank, inputs))
        arrays[f"{name}.up"] = rng.normal(0, 0.3, (NUM_VARIANT_CODES, outputs, rank))
        arrays[f"{name}.bias"] = rng.normal(0, 0.1, (NUM_VARIANT_CODES, outputs))
    return {k: np.asarray(v, np.float32) for k, v in arrays.items()}


def positions(seed: int) -> list[Game]:
    """One mid-game position of every variant, at a decision with a choice."""
    games = []
    for i, variant in enumerate(ALL_VARIANTS):
        game, rng = Game(variant_config(variant), seed=seed + i), np.random.default_rng(seed + i)
        for _ in range(int(rng.integers(0, 90))):
            if game.is_over:
                break
            game.apply(int(rng.choice(game.legal_action_ids())))
        while not game.is_over and game.legal_action_ids().size == 1:
            game.apply(int(game.legal_action_ids()[0]))
        if not game.is_over:
            games.append(game)
    return games


def leaves_of(games: list[Game]):
    """The first leaves of a search over ``games``, then of its second step (deeper states)."""
    search = BatchedSearch(games, simulations=4, seed=1, greedy_prior=SHAPE_WEIGHT)
    first = search.leaves()
    search.evaluate(np.zeros((len(first), 2710), np.float32),
                    np.full((len(first), 4), 0.5, np.float32))
    return [first, search.leaves()]


def small_arrays(seed: int, c: int = 4, oc: int = 2, hidden: int = 8) -> dict[str, np.ndarray]:
    """A random network of other sizes (4 viewer, 2 opponent channels, 8 hidden, its own value
    layer): the forward's general paths, not the 32- and 16-wide ones."""
    rng = np.random.default_rng(seed)
    planes, rest = shipped_arrays()["viewer_conv.weight"].shape[1], 534
    trunk_in = hidden + 2 * c + 6 * oc
    shapes = {"viewer_conv": (c, planes, 3, 3), "viewer_cells.1": (c, c),
              "opponent_cells.0": (oc, planes), "rest.0": (hidden, rest),
              "trunk.0": (hidden, trunk_in), "dense_head": (110, hidden),
              "viewer_film": (c, hidden), "viewer_head": (49, c), "thief_film": (oc, hidden),
              "thief_head": (1, oc), "value_hidden": (8, rest + trunk_in + hidden),
              "value_head": (4, 8)}
    arrays = {"prior_weight": np.float32(0.5)}
    for name, shape in shapes.items():
        arrays[f"{name}.weight"] = rng.normal(0, 0.3, shape)
        arrays[f"{name}.bias"] = rng.normal(0, 0.1, shape[0])
    return {k: np.asarray(v, np.float32) for k, v in arrays.items()}


@pytest.mark.parametrize("arrays", [shipped_arrays, lambda: shaken_arrays(3),
                                    lambda: value_hidden_arrays(4), lambda: small_arrays(5),
                                    lambda: film_arrays(6), lambda: adapter_arrays(7),
                                    lambda: film_arrays(8) | adapter_arrays(9, rank=1)],
                         ids=["shipped", "shaken", "value_hidden", "small", "variant_film",
                              "adapters", "film_and_adapters"])
def test_core_network_matches_the_numpy_forward_in_every_variant(arrays) -> None:
    net = NumpyAZNet(arrays())
    for leaves in leaves_of(positions(100)):
        legal = leaves.mask.astype(bool)
        logits, shares = net.evaluate(leaves.observation, leaves.mask, leaves.num_players,
                                      leaves.prior)
        core_logits, core_shares = net.core.evaluate(leaves.observation, leaves.mask,
                                                     leaves.num_players, leaves.prior)
        scale = np.abs(logits[legal]).max()
        np.testing.assert_allclose(core_logits[legal], logits[legal], atol=2e-6 * scale + 1e-5)
        assert (core_logits[~legal] == -1e9).all()
        np.testing.assert_allclose(core_shares, shares, atol=2e-6)
        np.testing.assert_allclose(core_shares.sum(1), 1.0, atol=1e-6)
        for n in (2, 3):
            assert (core_shares[leaves.num_players == n][:, n:] == 0).all()


def test_remembered_ranch_features_are_each_networks_own() -> None:
    """A ranch's features are remembered per network: two networks valuing the same leaves in
    turn each give their own forward, and the first gives the same values again."""
    leaves = leaves_of(positions(300))[1]
    a, b = NumpyAZNet(shaken_arrays(6)), NumpyAZNet(shaken_arrays(7))
    args = (leaves.observation, leaves.mask, leaves.num_players, leaves.prior)
    first, second, again = a.core.evaluate(*args), b.core.evaluate(*args), a.core.evaluate(*args)
    legal = leaves.mask.astype(bool)
    logits, shares = b.evaluate(*args)
    scale = np.abs(logits[legal]).max()
    np.testing.assert_allclose(second[0][legal], logits[legal], atol=2e-6 * scale + 1e-5)
    np.testing.assert_allclose(second[1], shares, atol=2e-6)
    assert not np.allclose(first[0][legal], second[0][legal])
    for mine, remembered in zip(first, again, strict=True):
        np.testing.assert_array_equal(mine, remembered)


def loop(search: BatchedSearch, net) -> object:
    """The leaves / evaluate loop with the core network answering from Python."""
    while (leaves := search.leaves()) is not None:
        logits, shares = net.evaluate(leaves.observation, leaves.mask, leaves.num_players,
                                      leaves.prior)
        search.evaluate(logits, absolute_shares(shares, leaves.seat, leaves.num_players))
    return search.result()


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
@pytest.mark.parametrize("threads", [1, 2])
def test_search_run_in_the_core_is_the_leaf_loop_with_that_network(algorithm, threads) -> None:
    net = NumpyAZNet(shaken_arrays(5)).core
    games = positions(200)

    def search() -> BatchedSearch:
        return BatchedSearch(games, simulations=24, seed=9, algorithm=algorithm,
                             max_considered=4, threads=threads, greedy_prior=SHAPE_WEIGHT)

    inside, outside = search().run(net), loop(search(), net)
    for name in ("action", "policy", "visits", "root_value", "searched"):
        np.testing.assert_array_equal(getattr(inside, name), getattr(outside, name), name)
    assert inside.searched.all() and (inside.visits.sum(1) > 0).all()


def test_bad_networks_are_refused_with_clear_errors() -> None:
    good, index = plain_arrays(), action_index()

    def refused(arrays, words: str, order=index) -> None:
        with pytest.raises(ValueError, match=words):
            _core.AzNet(arrays, order)

    refused({k: v for k, v in good.items() if k != "rest.0.weight"}, "no array rest.0.weight")
    refused({**good, "trunk.0.weight": good["trunk.0.weight"][:, :10].copy()},
            r"trunk.0.weight has shape \(128, 10\), expected \(128, 288\)")
    bad = good["value_head.bias"].copy()
    bad[1] = np.nan
    refused({**good, "value_head.bias": bad}, "value_head.bias is not finite")
    refused({**good, "rest.0.bias": "weights"}, "rest.0.bias must be an array of numbers")
    refused({**good, 7: good["rest.0.bias"]}, "array names must be strings")
    refused({**good, "prior_weight": np.ones(2, np.float32)}, "prior_weight must be one")
    twice = index.copy()
    twice[1] = twice[0]
    refused(good, "not a permutation", twice)
    refused(good, "index must place", index[:-1].copy())
    own = value_hidden_arrays(1)  # a value layer of its own: its head must read its width
    refused({**own, "value_head.weight": np.zeros((4, 7), np.float32)},
            r"value_head.weight has shape \(4, 7\), expected \(4, 24\)")
    refused({k: v for k, v in own.items() if k != "value_hidden.bias"},
            "no array value_hidden.bias")
    refused({**own, "value_hidden.weight": own["value_hidden.weight"][:, :400].copy()},
            r"value_hidden.weight has shape \(24, 400\), expected \(24, 950\)")
    film = film_arrays(1)["variant_film.weight"]
    refused({**good, "variant_film.weight": film[:, :12].copy()},
            r"variant_film.weight has shape \(256, 12\), expected \(256, 15\)")
    refused({**good, "variant_rest.scale": film}, "variant_rest.scale is not a variant layer")
    adapted = adapter_arrays(2)
    refused({k: v for k, v in adapted.items() if k != "variant_rest.down"},
            "no array variant_rest.down")
    refused({k: v for k, v in adapted.items() if k != "variant_trunk.bias"},
            "no array variant_trunk.bias")
    refused({**good, "variant_trunk.bias": adapted["variant_trunk.bias"]},  # a part alone
            "no array variant_rest.down")
    refused({**adapted, "variant_rest.down": np.zeros((15, 33, 534), np.float32)},
            r"variant_rest.down has shape \(15, 33, 534\), expected \(15, rank 1 to 32, 534\)")
    refused({**adapted, "variant_trunk.up": adapted["variant_trunk.up"][:, :, :2].copy()},
            r"variant_trunk.up has shape \(15, 128, 2\), expected \(15, 128, 3\)")


def test_the_variant_film_changes_each_variants_forward_alone() -> None:
    """A film entry of one variant code moves that variant's leaves and no other's."""
    leaves = leaves_of(positions(100))[0]
    arrays = film_arrays(2)
    code = (leaves.observation[:, PLAYERS_ONEHOT, None]
            * leaves.observation[:, None, MODE_ONEHOT]).reshape(len(leaves.mask), -1).argmax(1)
    alone = arrays["variant_film.weight"].copy()
    alone[:, np.arange(NUM_VARIANT_CODES) != code[0]] = 0.0
    args = (leaves.observation, leaves.mask, leaves.num_players, leaves.prior)
    plain = NumpyAZNet(plain_arrays()).core.evaluate(*args)[0]
    moved = NumpyAZNet({**arrays, "variant_film.weight": alone}).core.evaluate(*args)[0]
    legal = leaves.mask.astype(bool)
    changed = [not np.array_equal(moved[i][legal[i]], plain[i][legal[i]])
               for i in range(len(code))]
    assert changed == list(code == code[0]) and len(set(code.tolist())) == len(ALL_VARIANTS)


def test_bad_calls_are_refused_and_change_nothing() -> None:
    net = NumpyAZNet(shipped_arrays()).core
    game = positions(300)[0]
    leaves = leaves_of([game])[0]
    with pytest.raises(ValueError, match="greedy prior"):
        net.evaluate(leaves.observation, leaves.mask, leaves.num_players)
    with pytest.raises(ValueError, match="num_players must be 2 to 4"):
        net.evaluate(leaves.observation, leaves.mask, np.array([5], np.int32), leaves.prior)
    with pytest.raises(ValueError, match="expected observation"):
        net.evaluate(leaves.observation[:, :10].copy(), leaves.mask, leaves.num_players,
                     leaves.prior)
    with pytest.raises(ValueError, match="greedy_prior="):
        BatchedSearch([game], simulations=4).run(net)
    with pytest.raises(ValueError, match=r"must be a moonriver_env\.moonriver\.core\._core\.AzNet"):
        BatchedSearch([game], simulations=4, greedy_prior=SHAPE_WEIGHT).run("net.npz")
    search = BatchedSearch([game], simulations=4, seed=2, greedy_prior=SHAPE_WEIGHT)
    search.leaves()
    with pytest.raises(ValueError, match="leaves are pending"):
        search.run(net)
    fresh = BatchedSearch([game], simulations=4, seed=2, greedy_prior=SHAPE_WEIGHT)
    np.testing.assert_array_equal(loop(search, net).policy, fresh.run(net).policy)


def test_a_network_with_its_core_copy_pickles_and_makes_it_again() -> None:
    net = NumpyAZNet(shipped_arrays())
    leaves = leaves_of(positions(400))[0]
    before = net.core.evaluate(leaves.observation, leaves.mask, leaves.num_players, leaves.prior)
    again = pickle.loads(pickle.dumps(net))
    assert "core" not in again.__dict__
    after = again.core.evaluate(leaves.observation, leaves.mask, leaves.num_players, leaves.prior)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_wrong_dtypes_and_oversized_layers_are_refused() -> None:
    net = NumpyAZNet(shipped_arrays()).core
    leaves = leaves_of(positions(500))[0]
    args = (leaves.observation, leaves.mask, leaves.num_players, leaves.prior)
    for bad in ((args[0], args[1].astype(np.float32), *args[2:]),
                (*args[:2], args[2].astype(np.float64), args[3])):
        with pytest.raises(TypeError):
            net.evaluate(*bad)
    with pytest.raises(TypeError):
        _core.AzNet(shipped_arrays(), action_index().astype(np.float64))
    wide = {**shipped_arrays(), "opponent_cells.0.weight": np.zeros((5000, 22), np.float32)}
    with pytest.raises(ValueError, match="layers of at most 4096 outputs"):
        _core.AzNet(wide, action_index())
    with pytest.raises(ValueError, match=r"layers of at most 4096 outputs \(got 5000\)"):
        _core.AzNet(value_hidden_arrays(2, width=5000), action_index())


def test_a_network_output_that_overflows_stops_the_run_and_the_search() -> None:
    arrays = {**shipped_arrays(), "prior_weight": np.array(1e38, np.float32)}
    net = NumpyAZNet(arrays).core
    search = BatchedSearch(positions(600)[:3], simulations=8, greedy_prior=SHAPE_WEIGHT)
    with pytest.raises(ValueError, match="output is not finite"):
        search.run(net)
    with pytest.raises(ValueError, match="unusable"):
        search.leaves()
    with pytest.raises(ValueError, match="unusable"):
        search.result()


def test_a_search_used_from_two_threads_at_once_refuses_the_second() -> None:
    import threading

    net = NumpyAZNet(shipped_arrays()).core
    refused: list[str] = []
    for attempt in range(20):  # a retry only when the run ended before the check came
        search = BatchedSearch(positions(700)[:2], simulations=20_000 * (attempt + 1),
                               greedy_prior=SHAPE_WEIGHT)
        done: list[object] = []
        runner = threading.Thread(target=lambda s=search, d=done: d.append(s.run(net)))
        runner.start()
        while runner.is_alive() and not refused:  # the second caller, while the run goes on
            try:
                search.result()
            except ValueError as exc:  # before the run starts: the search is not finished
                if "not finished" not in str(exc):
                    refused.append(str(exc))
        runner.join()
        assert len(done) == 1  # the first caller's run was not disturbed
        if refused:
            break
    assert refused[:1] == ["search: already in use by another thread"]
    assert search.result().visits.sum() > 0
