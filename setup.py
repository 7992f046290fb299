"""Packaging that pyproject.toml cannot express: the top-level data folders travel in the wheel.

templates/, static/, seed_data/, migrations/ and docs/ stay at the top of the repository (where a
checkout and an editable install read them) and are shipped inside the package as
app/_bundled/<name>/, where a regular install reads them (app/config.py, `data_dir`).
"""

from setuptools import find_packages, setup

BUNDLED = ("templates", "static", "seed_data", "migrations", "docs")

packages = find_packages(include=["app", "app.*"])
package_dir: dict[str, str] = {}
package_data: dict[str, list[str]] = {}
for name in BUNDLED:
    package = f"app._bundled.{name}"
    packages.append(package)
    package_dir[package] = name
    package_data[package] = ["**/*"]

setup(packages=packages, package_dir=package_dir, package_data=package_data)
