"""measurement arrival and requests

Two optional columns on `measurement`: how a serving benchmark sent its requests (`arrival`:
burst, steady or poisson) and how many it sent in all (`requests`). The accuracy predictor's
queueing depends on both (docs/engine.md, "Accuracy against measurements"). Existing rows keep
NULL (not published / not recorded).

Revision ID: 3c7d2a9e5b14
Revises: 8efd47fcfc8a
Create Date: 2026-12-01 14:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '3c7d2a9e5b14'
down_revision: str | None = '8efd47fcfc8a'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('measurement', schema=None) as batch_op:
        batch_op.add_column(sa.Column('arrival', sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column('requests', sa.Integer(), nullable=True))
        batch_op.create_check_constraint(
            batch_op.f('ck_measurement_arrival'),
            "arrival IS NULL OR arrival IN ('burst', 'steady', 'poisson')",
        )
        batch_op.create_check_constraint(
            batch_op.f('ck_measurement_requests_positive'), 'requests IS NULL OR requests >= 1'
        )


def downgrade() -> None:
    with op.batch_alter_table('measurement', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_measurement_requests_positive'), type_='check')
        batch_op.drop_constraint(batch_op.f('ck_measurement_arrival'), type_='check')
        batch_op.drop_column('requests')
        batch_op.drop_column('arrival')
