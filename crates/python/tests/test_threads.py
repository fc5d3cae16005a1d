"""One Validator from 8 threads; batch forms release the interpreter."""

import threading

import agentshape

SCHEMA = {
    "type": "object",
    "required": ["n", "tags"],
    "properties": {"n": {"type": "integer", "maximum": 1000}, "tags": {"type": "array", "items": {"type": "string"}}},
    "x-invariants": [{"rule": "self.n >= self.tags.size()", "message": "n counts the tags"}],
}


def instance(i):
    return {"n": i, "tags": ["t"] * (i % 7)}


def expected(i):
    return i <= 1000 and i >= i % 7


def test_one_validator_from_eight_threads():
    v = agentshape.Validator(SCHEMA)
    results = {}
    errors = []
    start = threading.Barrier(8)

    def work(t):
        try:
            start.wait()
            got = []
            for i in range(t, 2000, 8):
                a = v.is_valid(instance(i))
                b = not v.validate(instance(i))
                c = not v.validate_json(f'{{"n": {i}, "tags": {["t"] * (i % 7)}}}'.replace("'", '"'))
                got.append((i, a, b, c))
            results[t] = got
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors
    seen = sorted(x for got in results.values() for x in got)
    assert len(seen) == 2000
    for i, a, b, c in seen:
        assert a == b == c == expected(i), i


def test_an_extractor_from_eight_threads_and_many_at_once():
    ex = agentshape.Extractor(schema=SCHEMA)
    texts = [f"answer: {{'n': {i}, 'tags': {['t'] * (i % 7)},}}" for i in range(800)]
    want = [expected(i) for i in range(800)]
    out = [None] * 8

    def work(t):
        out[t] = [e.valid for e in ex.extract_many(texts, threads=2)]

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert out == [want] * 8


def test_batch_work_lets_other_threads_run():
    """While extract_many works (interpreter released), a Python thread keeps counting."""
    texts = ["{'a': [" + ", ".join(str(i) for i in range(2000)) + "],}"] * 400
    ticks = [0]
    done = threading.Event()

    def counter():
        while not done.is_set():
            ticks[0] += 1

    th = threading.Thread(target=counter)
    th.start()
    try:
        before = ticks[0]
        agentshape.extract_many(texts, threads=1)
        during = ticks[0] - before
    finally:
        done.set()
        th.join(timeout=60)
    assert during > 0
