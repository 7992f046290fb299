"""admin sessions and generated secrets

Server-side admin page sessions (sign-out ends them) and the secret generated on first start
that signs session cookies when TIERLINE_SECRET_KEY is unset. Self-contained: two new tables.

Revision ID: be5ac78b44c1
Revises: 91f1fa322822
Create Date: 2026-12-01 07:34:04.253525
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = 'be5ac78b44c1'
down_revision: str | None = '91f1fa322822'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('app_secret',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=40), nullable=False),
    sa.Column('value', sa.String(length=128), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_app_secret')),
    sa.UniqueConstraint('name', name=op.f('uq_app_secret_name'))
    )
    op.create_table('admin_session',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('session_hash', sa.String(length=64), nullable=False),
    sa.Column('token_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['token_id'], ['api_token.id'], name=op.f('fk_admin_session_token_id_api_token'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_admin_session')),
    sa.UniqueConstraint('session_hash', name=op.f('uq_admin_session_session_hash'))
    )
    with op.batch_alter_table('admin_session', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_admin_session_expires_at'), ['expires_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_admin_session_token_id'), ['token_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('admin_session', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_admin_session_token_id'))
        batch_op.drop_index(batch_op.f('ix_admin_session_expires_at'))

    op.drop_table('admin_session')
    op.drop_table('app_secret')
