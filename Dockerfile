# The container of the GitHub Action. A release pushes it prebuilt (ghcr.io, linux/amd64 and
# linux/arm64) and the released action.yml names it by digest; main's action.yml builds this
# file (`image: Dockerfile`) for the self-test.
#
# The base is python:3.11-slim pinned by digest (Dependabot keeps the digest current: it reads
# the FROM line below, not an ARG). BASE_IMAGE selects the stage the others build on; the tests
# (scripts/container-test) pass --build-arg BASE_IMAGE=<a local Debian base> because no registry
# image can be pulled there, and the unused python-base stage is then skipped.
#
# Supply chain: every Python package is installed with --require-hashes from the hash-locked
# requirements/ files (scripts/lock makes them from pyproject.toml and constraints.txt), wheels
# only. The builder turns the project into a wheel with the pinned build backend and no build
# isolation (nothing fetched unlocked); the final stage installs the locked dependencies, then
# that wheel without dependencies and without an index, and checks that the set is consistent.
# No build tool, source tree or pip cache is left in the image. No USER (the runner mounts the
# workspace and the file-command files for root; the action gives the files it writes back to
# the workspace's owner) and no WORKDIR (the runner sets /github/workspace itself).
ARG BASE_IMAGE=python-base

FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7 AS python-base

FROM ${BASE_IMAGE} AS builder
COPY requirements/build.txt /tmp/build-requirements.txt
RUN python -m pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --require-hashes --only-binary=:all: -r /tmp/build-requirements.txt
COPY pyproject.toml README.md LICENSE /src/
COPY src/ /src/src/
RUN python -m build --wheel --no-isolation --outdir /dist /src

FROM ${BASE_IMAGE}
# git: `agent-eval action` marks the workspace as a safe.directory, reads the checked-out
# commit and evaluates the base commit in a worktree (baseline: git). Not pinned to a version
# (DL3008): a Debian suite serves only the current version of a package, so a pin would break
# the build at git's next security update; the base image's digest decides the suite.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
COPY requirements/action.txt /tmp/agent-eval/requirements.txt
COPY --from=builder /dist/ /tmp/agent-eval/dist/
RUN python -m pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --require-hashes --only-binary=:all: --no-deps -r /tmp/agent-eval/requirements.txt \
    && python -m pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --no-index --no-deps /tmp/agent-eval/dist/*.whl \
    && python -m pip check \
    && rm -rf /tmp/agent-eval \
    && /usr/local/bin/agent-eval --version
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["/usr/local/bin/agent-eval", "action"]
