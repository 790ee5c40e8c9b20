# Fastpad for self-hosters: slim Python, a non-root user, the deployment in the /data volume.
# Each step is a command of docker/fastpad.sh; tests/packaging/container.sh runs the same
# commands in a fresh directory.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY fastpad ./fastpad
COPY docker/fastpad.sh /usr/local/bin/fastpad.sh
RUN sh /usr/local/bin/fastpad.sh wheel /wheels /src

FROM python:3.11-slim
ENV FASTPAD_PREFIX=/opt/fastpad FASTPAD_DATA=/data FASTPAD_HOST=0.0.0.0 FASTPAD_PORT=8765 FASTPAD_UID=10001 \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY docker/fastpad.sh /usr/local/bin/fastpad.sh
COPY constraints.txt /tmp/constraints.txt
COPY --from=build /wheels /tmp/wheels
RUN sh /usr/local/bin/fastpad.sh install /tmp/wheels /tmp/constraints.txt && rm -rf /tmp/wheels /tmp/constraints.txt
RUN useradd --system --uid 10001 --no-create-home --home-dir /data fastpad && sh /usr/local/bin/fastpad.sh volume
USER 10001
VOLUME /data
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD ["sh", "/usr/local/bin/fastpad.sh", "health"]
ENTRYPOINT ["sh", "/usr/local/bin/fastpad.sh", "start"]
