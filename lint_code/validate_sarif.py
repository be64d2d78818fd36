#!/usr/bin/env python3
"""Validates SARIF logs against a JSON schema: the official SARIF 2.1.0 one.

    validate_sarif.py SCHEMA LOG...

One line a log: "LOG: valid", or "LOG: invalid: ..." with its first errors.
Exit 0 when every log is valid, 1 when one is not, 3 when python3-jsonschema
is not installed (the caller skips).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("validate_sarif: python3-jsonschema is not installed")
    sys.exit(3)


def main():
    if len(sys.argv) < 3:
        print("usage: validate_sarif.py SCHEMA LOG...")
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=jsonschema.FormatChecker())
    status = 0
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        if errors:
            status = 1
            shown = "; ".join(
                "/".join(str(p) for p in e.absolute_path) + ": " + e.message[:200] for e in errors[:3])
            print(f"{path}: invalid: {len(errors)} errors: {shown}")
        else:
            print(f"{path}: valid ({validator_class.__name__})")
    return status


if __name__ == "__main__":
    sys.exit(main())
