#!/usr/bin/env python3
"""Generates paths.golden.json: LangGraph's get_text_at_path outputs.

The two functions below are copied from langgraph/store/base/embed.py
(tokenize_path, get_text_at_path) so the golden file can be regenerated
without LangGraph installed. Run: python3 gen_paths.py > paths.golden.json
"""
import json


def tokenize_path(path):
    if not path:
        return []
    tokens = []
    current = []
    i = 0
    while i < len(path):
        char = path[i]
        if char == "[":
            if current:
                tokens.append("".join(current))
                current = []
            bracket_count = 1
            index_chars = ["["]
            i += 1
            while i < len(path) and bracket_count > 0:
                if path[i] == "[":
                    bracket_count += 1
                elif path[i] == "]":
                    bracket_count -= 1
                index_chars.append(path[i])
                i += 1
            tokens.append("".join(index_chars))
            continue
        elif char == "{":
            if current:
                tokens.append("".join(current))
                current = []
            brace_count = 1
            field_chars = ["{"]
            i += 1
            while i < len(path) and brace_count > 0:
                if path[i] == "{":
                    brace_count += 1
                elif path[i] == "}":
                    brace_count -= 1
                field_chars.append(path[i])
                i += 1
            tokens.append("".join(field_chars))
            continue
        elif char == ".":
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(char)
        i += 1
    if current:
        tokens.append("".join(current))
    return tokens


def get_text_at_path(obj, path):
    if not path or path == "$":
        return [json.dumps(obj, sort_keys=True, ensure_ascii=False)]
    tokens = tokenize_path(path) if isinstance(path, str) else path

    def _extract_from_obj(obj, tokens, pos):
        if pos >= len(tokens):
            if isinstance(obj, (str, int, float, bool)):
                return [str(obj)]
            elif obj is None:
                return []
            elif isinstance(obj, (list, dict)):
                return [json.dumps(obj, sort_keys=True, ensure_ascii=False)]
            return []
        token = tokens[pos]
        results = []
        if token.startswith("[") and token.endswith("]"):
            if not isinstance(obj, list):
                return []
            index = token[1:-1]
            if index == "*":
                for item in obj:
                    results.extend(_extract_from_obj(item, tokens, pos + 1))
            else:
                try:
                    idx = int(index)
                    if idx < 0:
                        idx = len(obj) + idx
                    if 0 <= idx < len(obj):
                        results.extend(_extract_from_obj(obj[idx], tokens, pos + 1))
                except (ValueError, IndexError):
                    return []
        elif token.startswith("{") and token.endswith("}"):
            if not isinstance(obj, dict):
                return []
            fields = [f.strip() for f in token[1:-1].split(",")]
            for field in fields:
                nested_tokens = tokenize_path(field)
                if nested_tokens:
                    current_obj = obj
                    for nested_token in nested_tokens:
                        if isinstance(current_obj, dict) and nested_token in current_obj:
                            current_obj = current_obj[nested_token]
                        else:
                            current_obj = None
                            break
                    if current_obj is not None:
                        if isinstance(current_obj, (str, int, float, bool)):
                            results.append(str(current_obj))
                        elif isinstance(current_obj, (list, dict)):
                            results.append(json.dumps(current_obj, sort_keys=True, ensure_ascii=False))
        elif token == "*":
            if isinstance(obj, dict):
                for value in obj.values():
                    results.extend(_extract_from_obj(value, tokens, pos + 1))
            elif isinstance(obj, list):
                for item in obj:
                    results.extend(_extract_from_obj(item, tokens, pos + 1))
        else:
            if isinstance(obj, dict) and token in obj:
                results.extend(_extract_from_obj(obj[token], tokens, pos + 1))
        return results

    return _extract_from_obj(obj, tokens, 0)


# Dict keys are in sorted order so that Python's insertion-order "*" agrees
# with Go's sorted-key "*".
VALUE = {
    "a": {"b": "nested", "c": [1, 2.5, True, None, "s"], "d": {"e": 1e-05, "f": 0.1}},
    "big": 10000000000000000.0,
    "bool": False,
    "empty": {},
    "emptylist": [],
    "float": 1.0,
    "int": 1,
    "items": [
        {"name": "x", "tags": ["t1", "t2"], "w": 3},
        {"name": "y", "tags": [], "w": -0.5},
        {"name": "z", "w": None},
    ],
    "neg": -7,
    "none": None,
    "text": "héllo \"wörld\"\n\t\\ 日本",
    "tiny": 1.5e-10,
    "year": 2026.0,
}

PATHS = [
    "$", "", "text", "int", "float", "bool", "none", "neg", "big", "tiny", "year",
    "a", "a.b", "a.c", "a.c[0]", "a.c[1]", "a.c[2]", "a.c[3]", "a.c[4]", "a.c[-1]",
    "a.c[-5]", "a.c[5]", "a.c[-6]", "a.c[*]", "a.d", "a.d.e", "a.d.f", "a.*",
    "items[*].name", "items[*].w", "items[*].tags", "items[*].tags[*]", "items[0].tags[1]",
    "items[-1].name", "items[*]", "items", "*", "*.b", "{text,int}", "{a.b, a.d.e, missing}",
    "a.{b,c}", "items[0].{name,w}", "{empty,emptylist,none}", "missing", "a.missing",
    "text.x", "int[0]", "items.name", "empty", "emptylist", "items[*].missing",
]

print(json.dumps({
    "value": VALUE,
    "cases": [{"path": p, "texts": get_text_at_path(VALUE, p)} for p in PATHS],
}, ensure_ascii=False, indent=1, sort_keys=True))
