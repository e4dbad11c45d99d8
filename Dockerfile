# The sleepcompact image: the library, the CLI, the worker and the scheduler.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY sleepcompact ./sleepcompact
COPY worker ./worker
COPY scheduler ./scheduler
RUN pip install --no-cache-dir . && useradd --system --uid 10001 sleepcompact \
    && mkdir /data && chown sleepcompact /data
USER sleepcompact
ENTRYPOINT ["sleepcompact"]
