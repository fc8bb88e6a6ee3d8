"""The model soup: the mean of equal-sized networks' weights, refusals, the file it writes."""

from __future__ import annotations

import pickle

import pytest
import torch
from moonriver_env.training.export_weights import export
from moonriver_env.training.policy_net import NetConfig, RanchNet, load_net, save_net
from moonriver_env.training.soup import main, soup

SIZES = NetConfig(channels=4, opponent_channels=2, hidden=8, use_prior=True)
PLAYED = {"variants": ["2p-base", "4p-base"]}


def _net(path, seed: int, sizes: NetConfig = SIZES, meta: dict | None = None) -> str:
    torch.manual_seed(seed)
    net = RanchNet(sizes)
    for p in net.parameters():  # every parameter differs between seeds, the prior too
        p.data.normal_()
    save_net(net, str(path), PLAYED | {"samples": 10} if meta is None else meta)
    return str(path)


def test_a_soup_is_the_mean_of_its_networks(tmp_path):
    paths = [_net(tmp_path / f"{i}.pt", i) for i in range(3)]
    net, meta = soup(paths)
    nets = [load_net(p)[0].state_dict() for p in paths]
    for name, value in net.named_parameters():
        expected = sum(n[name] for n in nets) / 3
        assert torch.allclose(value, expected, atol=1e-6), name
        assert not torch.allclose(value, nets[0][name])
    assert meta["soup"] == paths and meta["samples"] == 30
    assert meta["variants"] == ["2p-base", "4p-base"]


def test_a_soup_of_one_network_twice_is_that_network(tmp_path):
    path = _net(tmp_path / "a.pt", 0)
    net, _ = soup([path, path])
    for name, value in load_net(path)[0].state_dict().items():
        assert torch.equal(net.state_dict()[name], value), name


def test_the_file_loads_and_exports_as_a_runs_final_pt(tmp_path, capsys):
    a, b = _net(tmp_path / "a.pt", 0), _net(tmp_path / "b.pt", 1)
    dest = str(tmp_path / "new" / "final.pt")  # its folder is made
    assert main([dest, a, b]) == 0
    net, meta = load_net(dest)
    expected = soup([a, b])[0].state_dict()["prior_weight"]
    assert torch.equal(net.state_dict()["prior_weight"], expected)
    assert meta["soup"] == [a, b]
    assert export(dest, str(tmp_path / "soup.npz"))["variants"] == ["2p-base", "4p-base"]


def test_networks_of_other_sizes_or_games_are_refused(tmp_path):
    a = _net(tmp_path / "a.pt", 0)
    wide = _net(tmp_path / "wide.pt", 1, NetConfig(channels=4, opponent_channels=2, hidden=16,
                                                   use_prior=True))
    with pytest.raises(ValueError, match=r"sizes .* differ") as info:
        soup([a, wide])
    assert "wide.pt" in str(info.value)
    assert isinstance(pickle.loads(pickle.dumps(info.value)), ValueError)
    two = _net(tmp_path / "two.pt", 2, meta={"num_players": 2, "mode": "base"})
    with pytest.raises(ValueError, match="other games"):
        soup([a, two])
    with pytest.raises(ValueError, match="two or more"):
        soup([a])


def test_the_cli_refuses_in_one_line(tmp_path, capsys):
    a = _net(tmp_path / "a.pt", 0)
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path / "out.pt"), a, str(tmp_path / "missing.pt")])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("moonriver soup:") and "missing.pt" in err and "\n" not in err
    assert not (tmp_path / "out.pt").exists()


@pytest.mark.parametrize("data", [b"", b"\x80\x02junk" * 40, b"PK\x03\x04" + bytes(200)])
def test_bytes_that_are_no_checkpoint_are_refused_with_a_value_error(tmp_path, data):
    path = tmp_path / "bad.pt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match="not a RanchNet checkpoint"):
        load_net(str(path))


def test_weights_that_do_not_fit_their_sizes_are_refused(tmp_path):
    path = _net(tmp_path / "a.pt", 0)
    blob = torch.load(path, weights_only=True)
    blob["state_dict"]["v)ewer_head.weight"] = blob["state_dict"].pop("viewer_head.weight")
    torch.save(blob, path)
    with pytest.raises(ValueError, match="do not fit the sizes"):
        load_net(path)
    blob["config"]["hidden"] = "8"
    torch.save(blob, path)
    with pytest.raises(ValueError, match="hidden"):
        load_net(path)
