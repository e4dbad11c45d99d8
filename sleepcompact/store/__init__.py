"""Persistence: SQLAlchemy tables, Alembic migrations, repositories and the unit of work."""
