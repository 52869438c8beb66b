#!/usr/bin/env python3
"""Type-checks every Swift code sample the project shows: the ```swift blocks of README.md, docs/*.md and the DocC
catalogs, and those in doc comments (what Xcode's Quick Help shows).

    scripts/check-samples.py portable          # against the main package's debug build (swift build first)
    scripts/check-samples.py apple SCRATCH     # the samples that need Apple's frameworks, against the SDK stand-ins
                                               # scripts/apple-check.sh built in SCRATCH (.build-apple, …)
    scripts/check-samples.py list              # which samples there are, and how each is checked
    scripts/check-samples.py selftest          # the checker refuses a sample naming what does not exist, and one
                                               # using a name its Partial line does not declare

How a sample is read:
- Its `import` lines are its imports. A sample without any continues the one before it in the same file and takes its
  imports; a sample in a doc comment without any imports the module it documents, and BioAuthCore (whose types every
  library's API uses). Foundation is always imported.
- A sample that is deliberately partial says so in a comment line of its own,
  `// Partial: assumes NAME: TYPE; NAME: TYPE`, and is checked with those names declared (as parameters).
- Everything else is statements, checked as the body of an `async throws` function (`@MainActor` for Apple samples),
  unless the sample declares types of its own at its top level (a line starting `@main`, `struct`, `class`,
  `final class`, `enum`, `extension` or `actor`, as an app's `App` does): then it is checked as a file of its own, with
  the names a Partial line assumes declared as globals.
- A sample is an Apple one when it imports BioAuthApple, SwiftUI or UIKit; it is then checked against the stand-ins
  of Apple's frameworks, with BioAuthApple compiled as BioAuthAppleUnderTest (scripts/apple-check.sh).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
APPLE_MODULES = {"BioAuthApple", "SwiftUI", "UIKit"}
DECLARATION = re.compile(r"^(?:@main\b|struct |class |final class |enum |extension |actor )")
IMPORT = re.compile(r"^import (?:(?:class|struct|enum|protocol|func|var|let|typealias) )?(\w+)")


class Sample:
    def __init__(self, path, line, lines):
        self.path = os.path.relpath(path, ROOT)
        self.line = line
        self.lines = lines
        # `import M`, or `import class M.Declaration` (one declaration of M; the module is M).
        self.imports = [m.group(1) for m in (IMPORT.match(l) for l in lines) if m]
        self.import_lines = [l for l in lines if IMPORT.match(l)]
        self.assumed = []
        for l in lines:
            m = re.match(r"^\s*// Partial: assumes (.+)$", l)
            if m:
                self.assumed += [part.strip() for part in m.group(1).split(";") if part.strip()]

    @property
    def declarations(self):
        return any(DECLARATION.match(l) for l in self.lines)

    @property
    def apple(self):
        return bool(APPLE_MODULES & set(self.imports))

    def source(self, index):
        # The sample's own import lines, as written; an inherited import is the whole module.
        written = self.import_lines or [f"import {i}" for i in self.imports]
        imports = ["import Foundation"] + written
        if self.apple:
            imports = ["import BioAuthAppleUnderTest" if i == "import BioAuthApple" else i for i in imports]
        body = [l for l in self.lines if not IMPORT.match(l)]
        if self.declarations:
            header = "".join(f"{i}\n" for i in dict.fromkeys(imports))
            assumed = "".join(f"nonisolated(unsafe) var {a}!\n" for a in self.assumed)
            return f"{header}\n// {self.path}:{self.line}\n{assumed}" + "".join(f"{l}\n" for l in body)
        params = ", ".join(self.assumed)
        isolation = "@MainActor " if self.apple else ""
        header = "".join(f"{i}\n" for i in dict.fromkeys(imports))
        indented = "".join(f"    {l}\n" for l in body)
        return f"{header}\n// {self.path}:{self.line}\n{isolation}func sample{index}({params}) async throws {{\n{indented}}}\n"


def markdown_samples(path):
    samples, previous = [], ([], [])
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```swift":
            start, block = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                block.append(lines[i])
                i += 1
            sample = Sample(path, start, block)
            if not sample.imports:
                sample.imports, sample.import_lines = list(previous[0]), list(previous[1])
            previous = (sample.imports, sample.import_lines)
            samples.append(sample)
        i += 1
    return samples


def doc_comment_samples(path):
    module = os.path.relpath(path, os.path.join(ROOT, "Sources")).split(os.sep)[0]
    samples = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)/// ```swift\s*$", lines[i])
        if m:
            start, block = i + 1, []
            i += 1
            while i < len(lines) and not re.match(r"^\s*/// ```\s*$", lines[i]):
                block.append(re.sub(r"^\s*/// ?", "", lines[i]))
                i += 1
            sample = Sample(path, start, block)
            if not sample.imports:
                sample.imports = list(dict.fromkeys([module, "BioAuthCore"]))
            samples.append(sample)
        i += 1
    return samples


def all_samples():
    samples = []
    for path in [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + sorted(
        glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "**", "*.md"), recursive=True)
    ):
        samples += markdown_samples(path)
    for path in sorted(glob.glob(os.path.join(ROOT, "Sources", "**", "*.swift"), recursive=True)):
        samples += doc_comment_samples(path)
    return samples


def module_flags(build_arguments, scratch):
    """-I for a build's Swift modules, and the module maps of its C modules (swift-nio's, swift-crypto's, …)."""
    bin_path = subprocess.run(
        ["swift", "build", "--show-bin-path", "--scratch-path", scratch] + build_arguments, cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    maps = glob.glob(os.path.join(ROOT, scratch, "checkouts", "*", "Sources", "*", "include", "module.modulemap"))
    maps += glob.glob(os.path.join(bin_path, "*", "module.modulemap"))
    return ["-I", os.path.join(bin_path, "Modules")] + sum((["-Xcc", f"-fmodule-map-file={m}"] for m in maps), [])


def check(samples, flags, quiet=False):
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        for index, sample in enumerate(samples):
            file = os.path.join(folder, f"sample{index}.swift")
            with open(file, "w", encoding="utf-8") as out:
                out.write(sample.source(index))
            result = subprocess.run(
                ["swiftc", "-typecheck", "-parse-as-library", "-swift-version", "6", "-module-cache-path", os.path.join(folder, "cache")] + flags + [file],
                capture_output=True,
                text=True,
            )
            errors = [l for l in (result.stdout + result.stderr).split("\n") if "error:" in l and "|" not in l]
            if quiet:
                failures += result.returncode != 0
            elif result.returncode != 0:
                failures += 1
                print(f"check-samples: {sample.path}:{sample.line} does not compile:")
                for error in errors[:8]:
                    print("    " + error.replace(file, f"{sample.path} (sample)"))
            else:
                print(f"check-samples: {sample.path}:{sample.line} compiles")
    return failures


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("portable", "apple", "list", "selftest"):
        print(__doc__)
        return 2
    samples = all_samples()
    if sys.argv[1] == "list":
        for s in samples:
            print(f"{s.path}:{s.line}  {'apple' if s.apple else 'portable'}  imports {', '.join(s.imports)}"
                  + (f"  assumes {'; '.join(s.assumed)}" if s.assumed else ""))
        return 0
    if sys.argv[1] == "selftest":
        here = os.path.join(ROOT, "README.md")
        good = Sample(here, 1, ["import BioAuthClient", "// Partial: assumes flows: BioAuthFlows", "try await flows.signInWithBiometrics()"])
        bad = [
            Sample(here, 2, ["import BioAuthClient", "let store = KeychainSecureStore.system(service: \"x\")"]),
            Sample(here, 3, ["import BioAuthClient", "try await flows.signInWithBiometrics()"]),
            Sample(here, 4, ["import BioAuthClient", "let copy = PromptCopy(language: .simplifiedChinese)", "let m = Money(minorUnits: 1, currency: .cny)"]),
        ]
        flags = module_flags([], ".build")
        if check([good], flags, quiet=True) != 0 or check(bad, flags, quiet=True) != len(bad):
            print("check-samples: the checker did not tell good samples from bad ones")
            return 1
        print("check-samples: the checker refuses the samples it must")
        return 0
    if sys.argv[1] == "portable":
        chosen = [s for s in samples if not s.apple]
        failures = check(chosen, module_flags([], ".build"))
    else:
        if len(sys.argv) < 3:
            print("give the stand-ins' build folder (.build-apple)")
            return 2
        chosen = [s for s in samples if s.apple]
        failures = check(chosen, module_flags(["--package-path", "Tests/AppleSDK"], sys.argv[2]))
    print(f"check-samples: {len(chosen) - failures} of {len(chosen)} {sys.argv[1]} samples compile")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
