"""The CRF against brute-force enumeration of every tag path of a tiny lattice."""

import itertools

import pytest
import torch

from staticvec.evaluate.tagging.crf import CRF


def brute_force(crf, emissions, length):
    """(score of every path, best path) for one sentence of ``length`` tokens."""
    scores = {}
    for path in itertools.product(range(crf.n_tags), repeat=length):
        s = crf.start[path[0]] + crf.end[path[-1]] + sum(emissions[t, path[t]] for t in range(length))
        s = s + sum(crf.transitions[path[t - 1], path[t]] for t in range(1, length))
        scores[path] = s
    best = max(scores, key=lambda p: scores[p].item())
    return scores, best


@pytest.fixture
def lattice():
    torch.manual_seed(0)
    crf = CRF(3)
    with torch.no_grad():  # larger than the default init, so transitions decide some paths
        crf.transitions.normal_(0, 2.0)
        crf.start.normal_(0, 1.0)
        crf.end.normal_(0, 1.0)
    emissions = torch.randn(3, 5, 3, dtype=torch.float32) * 2
    lengths = torch.tensor([5, 3, 1])
    mask = torch.arange(5).unsqueeze(0) < lengths.unsqueeze(1)
    return crf, emissions, mask, lengths


def test_viterbi_equals_brute_force(lattice):
    crf, emissions, mask, lengths = lattice
    decoded = crf.decode(emissions, mask)
    for b, n in enumerate(lengths.tolist()):
        _, best = brute_force(crf, emissions[b], n)
        assert decoded[b] == list(best)


def test_log_partition_and_likelihood_equal_brute_force(lattice):
    crf, emissions, mask, lengths = lattice
    log_z = crf.log_partition(emissions, mask)
    for b, n in enumerate(lengths.tolist()):
        scores, _ = brute_force(crf, emissions[b], n)
        all_scores = torch.stack(list(scores.values()))
        assert log_z[b].item() == pytest.approx(torch.logsumexp(all_scores, 0).item(), abs=1e-5)
        path = torch.tensor(list(scores)[7 % len(scores)] + (0,) * (5 - n))  # any path, padded
        llh = crf(emissions[b : b + 1], path.unsqueeze(0), mask[b : b + 1], reduction="none")
        expected = scores[tuple(path[:n].tolist())] - torch.logsumexp(all_scores, 0)
        assert llh.item() == pytest.approx(expected.item(), abs=1e-5)


def test_likelihoods_of_all_paths_sum_to_one(lattice):
    crf, emissions, mask, _ = lattice
    b, n = 1, 3
    paths = torch.tensor([p + (0, 0) for p in itertools.product(range(3), repeat=n)])
    llh = crf(emissions[b : b + 1].expand(len(paths), -1, -1), paths, mask[b : b + 1].expand(len(paths), -1), reduction="none")
    assert torch.logsumexp(llh, 0).item() == pytest.approx(0.0, abs=1e-5)


def test_gradient_of_log_partition_is_the_tag_marginals(lattice):
    crf, emissions, mask, lengths = lattice
    e = emissions[:1, :4].clone().requires_grad_(True)
    m = torch.ones(1, 4, dtype=torch.bool)
    crf.log_partition(e, m).sum().backward()
    scores, _ = brute_force(crf, e[0].detach(), 4)
    probs = torch.softmax(torch.stack(list(scores.values())), 0)
    marginals = torch.zeros(4, 3)
    for p, path in zip(probs, scores):
        for t, tag in enumerate(path):
            marginals[t, tag] += p
    assert torch.allclose(e.grad[0], marginals, atol=1e-5)


def test_agrees_with_pytorch_crf(lattice):
    torchcrf = pytest.importorskip("torchcrf")
    crf, emissions, mask, _ = lattice
    reference = torchcrf.CRF(3, batch_first=True)
    with torch.no_grad():
        reference.start_transitions.copy_(crf.start)
        reference.end_transitions.copy_(crf.end)
        reference.transitions.copy_(crf.transitions)
    tags = torch.randint(0, 3, (3, 5), generator=torch.Generator().manual_seed(1))
    ours = crf(emissions, tags, mask, reduction="none")
    theirs = reference(emissions, tags, mask, reduction="none")
    assert torch.allclose(ours, theirs, atol=1e-5)
    assert crf.decode(emissions, mask) == reference.decode(emissions, mask)


def test_forward_recursion_equals_the_logsumexp_one(lattice):
    """The probability-space forward step equals logsumexp(alpha + transitions) (values and gradients)."""
    crf, emissions, mask, _ = lattice
    emissions = emissions.clone().requires_grad_(True)

    def reference(e):
        alpha = crf.start + e[:, 0]
        for t in range(1, e.shape[1]):
            step = torch.logsumexp(alpha.unsqueeze(2) + crf.transitions + e[:, t].unsqueeze(1), dim=1)
            alpha = torch.where(mask[:, t].unsqueeze(1), step, alpha)
        return torch.logsumexp(alpha + crf.end, dim=1)

    ours, theirs = crf.log_partition(emissions, mask), reference(emissions)
    assert torch.allclose(ours, theirs, atol=1e-5)
    g_ours = torch.autograd.grad(ours.sum(), [emissions, crf.transitions])
    g_theirs = torch.autograd.grad(theirs.sum(), [emissions, crf.transitions])
    for a, b in zip(g_ours, g_theirs):
        assert torch.allclose(a, b, atol=1e-5)


def test_forward_recursion_stays_finite_with_extreme_transitions(lattice):
    """A transition 200 nats below the others (a forbidden BIO move after long training) underflows
    exp() in float32; the floored sum keeps the log-partition and its gradient finite and exact
    wherever the other paths dominate."""
    crf, emissions, mask, _ = lattice
    with torch.no_grad():
        crf.transitions[:, 1] = -200.0  # no tag leads to tag 1 but at a huge cost
    z = crf.log_partition(emissions, mask)
    assert torch.isfinite(z).all()
    scores, _ = brute_force(crf, emissions[0], 5)
    assert torch.allclose(z[0], torch.logsumexp(torch.stack(list(scores.values())), 0), atol=1e-4)
    (grad,) = torch.autograd.grad(z.sum(), [crf.transitions])
    assert torch.isfinite(grad).all()


@pytest.mark.parametrize("lengths", [[5, 4, 3], [5, 5, 5], [4, 5, 2, 5]])
def test_each_row_of_a_padded_batch_is_its_sentence_alone(lengths):
    """Steps before the shortest sentence's end skip the mask; later ones freeze a finished row:
    either way a row's log-partition and gradients are those of its sentence without padding."""
    torch.manual_seed(1)
    crf = CRF(4)
    with torch.no_grad():
        crf.transitions.normal_(0, 2.0)
    lengths = torch.tensor(lengths)
    mask = torch.arange(5).unsqueeze(0) < lengths.unsqueeze(1)
    emissions = (torch.randn(len(lengths), 5, 4) * 2).requires_grad_(True)
    batch = crf.log_partition(emissions, mask)
    g_emissions, g_transitions = torch.autograd.grad(batch.sum(), [emissions, crf.transitions])
    alone_transitions = torch.zeros_like(g_transitions)
    for b, n in enumerate(lengths.tolist()):
        one = emissions[b : b + 1, :n].detach().requires_grad_(True)
        z = crf.log_partition(one, torch.ones(1, n, dtype=torch.bool))
        g_one, g_trans = torch.autograd.grad(z.sum(), [one, crf.transitions])
        assert torch.allclose(batch[b], z[0], atol=1e-5)
        assert torch.allclose(g_emissions[b, :n], g_one[0], atol=1e-5)
        assert torch.equal(g_emissions[b, n:], torch.zeros_like(g_emissions[b, n:]))  # padding gets nothing
        alone_transitions += g_trans
        scores, _ = brute_force(crf, emissions[b].detach(), n)
        assert torch.allclose(batch[b], torch.logsumexp(torch.stack(list(scores.values())), 0), atol=1e-4)
    assert torch.allclose(g_transitions, alone_transitions, atol=1e-5)
