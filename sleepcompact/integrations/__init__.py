"""Adapters between sleepcompact and agent frameworks, each in its own module so that ``import
sleepcompact`` never imports a framework:

* ``sleepcompact.integrations.openai_agents``: ``SleepcompactSession``, an OpenAI Agents SDK session
  (``pip install 'sleepcompact[agents]'``);
* ``sleepcompact.integrations.langchain``: ``SleepcompactMiddleware``, a LangChain v1 agent middleware
  (``pip install 'sleepcompact[langchain]'``).

Each module imports its framework when it is imported, and says which extra to install when the
framework is missing. Neither builds a ``Memory`` (an engine, a connection pool) before first use.
"""
