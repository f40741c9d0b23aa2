# The container of the GitHub Action (action.yml: runs.using docker, image Dockerfile).
#
# BASE_IMAGE is a slim Python 3.11 image. The public default is what GitHub's runner builds
# with; the tests (scripts/container-test) build this same file on a local Debian base given as
# --build-arg BASE_IMAGE=..., because no registry image can be pulled there.
#
# Two stages: the builder turns the project into a wheel (pip fetches the build backend into an
# isolated build environment that stays in the builder); the final stage installs that wheel
# with its dependencies pinned by constraints.txt (the project's lock), so no build tool, source
# tree or pip cache is left in the image. No USER (the runner mounts the workspace and the
# file-command files for root) and no WORKDIR (the runner sets the working directory to
# /github/workspace itself).
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS builder
COPY pyproject.toml README.md /src/
COPY src/ /src/src/
RUN python -m pip wheel --no-cache-dir --disable-pip-version-check --no-deps \
        --wheel-dir /dist /src

FROM ${BASE_IMAGE}
# git: `agent-eval action` marks the workspace as a safe.directory, reads the checked-out
# commit and evaluates the base commit in a worktree (baseline: git). Not pinned to a version
# (DL3008): a Debian suite serves only the current version of a package, so a pin would break
# the build at git's next security update; the base image decides the suite.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
COPY constraints.txt /tmp/agent-eval/constraints.txt
COPY --from=builder /dist/ /tmp/agent-eval/dist/
RUN python -m pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        -c /tmp/agent-eval/constraints.txt /tmp/agent-eval/dist/*.whl \
    && rm -rf /tmp/agent-eval \
    && /usr/local/bin/agent-eval --version
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["/usr/local/bin/agent-eval", "action"]
