"""Naive references the vectorised code is checked against: one text at a time, Python loops."""

from __future__ import annotations

import torch

from internals import SpanItem


def naive_token_lists(tokenizer, text: str, spans) -> tuple[list[int], list[list[int]]]:
    """Token ids of `text` alone and, per span (whole text if none), the tokens overlapping it."""
    enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    wanted = list(spans) if spans else [(0, len(text))]
    out = []
    for start, end in wanted:
        chosen = []
        for t, ((a, b), special) in enumerate(
            zip(enc["offset_mapping"], enc["special_tokens_mask"])
        ):
            if special:
                continue
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if a < b and a < end and b > start:
                chosen.append(t)
        out.append(chosen)
    return list(enc["input_ids"]), out


def naive_features(model, tokenizer, items: list[SpanItem], kind: str, how: str = "mean"):
    """HF forward with output_hidden_states per text + per-span loop; `[item, site, dim*seg]`."""
    rows = []
    for item in items:
        per_part = []
        for text, spans in item.texts():
            ids, token_lists = naive_token_lists(tokenizer, text, spans)
            inputs = {"input_ids": torch.tensor([ids], device=model.device)}
            with torch.no_grad():
                if kind == "encoder-decoder":
                    start = model.config.decoder_start_token_id
                    dec = torch.tensor([[start, *ids]], device=model.device)
                    out = model(**inputs, decoder_input_ids=dec, output_hidden_states=True)
                    states = [(h.cpu(), 0) for h in out.encoder_hidden_states]
                    states += [(h.cpu(), 1) for h in out.decoder_hidden_states]
                else:
                    out = model(**inputs, output_hidden_states=True)
                    states = [(h.cpu(), 0) for h in out.hidden_states]
            site_vectors = []
            for hidden, shift in states:
                pooled = []
                for tokens in token_lists:
                    vecs = torch.stack([hidden[0, t + shift] for t in tokens])
                    pooled.append(
                        {
                            "mean": vecs.mean(0),
                            "max": vecs.max(0).values,
                            "first": vecs[0],
                            "last": vecs[-1],
                        }[how]
                    )
                site_vectors.append(torch.cat(pooled))
            per_part.append(torch.stack(site_vectors))
        rows.append(torch.cat(per_part, dim=-1))
    return torch.stack(rows)
