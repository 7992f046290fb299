"""measurement expert_parallel

One optional column on `measurement`: whether the run sharded a mixture-of-experts model's
routed experts over its GPUs with data-parallel attention (`expert_parallel`), as its source
states. The accuracy report does not evaluate such rows with a tensor-parallel plan
(docs/engine.md, "Serving rows: data notes"). Existing rows keep NULL (not stated).

Revision ID: 5d1e7b3a9c20
Revises: 3c7d2a9e5b14
Create Date: 2026-12-01 17:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '5d1e7b3a9c20'
down_revision: str | None = '3c7d2a9e5b14'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('measurement', schema=None) as batch_op:
        batch_op.add_column(sa.Column('expert_parallel', sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('measurement', schema=None) as batch_op:
        batch_op.drop_column('expert_parallel')
