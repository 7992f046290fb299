"""measurement table: published figures with their sources (issue 12)

Revision ID: 0f9b43e22edc
Revises: be5ac78b44c1
Create Date: 2026-12-01 07:20:42.773289
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0f9b43e22edc'
down_revision: str | None = 'be5ac78b44c1'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('measurement',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('hardware', sa.JSON(), nullable=False),
    sa.Column('build_slug', sa.String(length=80), nullable=True),
    sa.Column('accelerator_slug', sa.String(length=80), nullable=True),
    sa.Column('accelerator_count', sa.Integer(), nullable=False),
    sa.Column('nodes', sa.Integer(), nullable=False),
    sa.Column('model_slug', sa.String(length=80), nullable=False),
    sa.Column('model_hf_id', sa.String(length=200), nullable=True),
    sa.Column('runtime', sa.String(length=32), nullable=False),
    sa.Column('runtime_version', sa.String(length=200), nullable=True),
    sa.Column('backend', sa.String(length=32), nullable=True),
    sa.Column('precision', sa.String(length=32), nullable=True),
    sa.Column('batch', sa.Integer(), nullable=True),
    sa.Column('concurrency', sa.Integer(), nullable=True),
    sa.Column('prompt_tokens', sa.Integer(), nullable=True),
    sa.Column('output_tokens', sa.Integer(), nullable=True),
    sa.Column('context_depth_tokens', sa.Integer(), nullable=True),
    sa.Column('tensor_parallel', sa.Integer(), nullable=True),
    sa.Column('pipeline_parallel', sa.Integer(), nullable=True),
    sa.Column('offload', sa.JSON(), nullable=True),
    sa.Column('metric', sa.String(length=32), nullable=False),
    sa.Column('value', sa.Float(), nullable=False),
    sa.Column('unit', sa.String(length=16), nullable=False),
    sa.Column('source_title', sa.String(length=200), nullable=True),
    sa.Column('read_from_chart', sa.Boolean(), nullable=False),
    sa.Column('slug', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(length=160), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('estimated', sa.JSON(), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('as_of', sa.Date(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("metric IN ('decode_tokens_per_s', 'prefill_tokens_per_s', 'ttft_s', 'itl_ms', 'e2e_latency_s', 'output_tokens_per_s_total', 'out_of_memory')", name=op.f('ck_measurement_metric')),
    sa.CheckConstraint('accelerator_count >= 1', name=op.f('ck_measurement_accelerator_count_positive')),
    sa.CheckConstraint('batch IS NULL OR batch >= 1', name=op.f('ck_measurement_batch_positive')),
    sa.CheckConstraint('nodes >= 1', name=op.f('ck_measurement_nodes_positive')),
    sa.CheckConstraint('value >= 0', name=op.f('ck_measurement_value_not_negative')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_measurement'))
    )
    with op.batch_alter_table('measurement', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_measurement_accelerator_slug'), ['accelerator_slug'], unique=False)
        batch_op.create_index(batch_op.f('ix_measurement_build_slug'), ['build_slug'], unique=False)
        batch_op.create_index(batch_op.f('ix_measurement_metric'), ['metric'], unique=False)
        batch_op.create_index(batch_op.f('ix_measurement_model_slug'), ['model_slug'], unique=False)
        batch_op.create_index(batch_op.f('ix_measurement_runtime'), ['runtime'], unique=False)
        batch_op.create_index(batch_op.f('ix_measurement_slug'), ['slug'], unique=True)



def downgrade() -> None:
    with op.batch_alter_table('measurement', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_measurement_slug'))
        batch_op.drop_index(batch_op.f('ix_measurement_runtime'))
        batch_op.drop_index(batch_op.f('ix_measurement_model_slug'))
        batch_op.drop_index(batch_op.f('ix_measurement_metric'))
        batch_op.drop_index(batch_op.f('ix_measurement_build_slug'))
        batch_op.drop_index(batch_op.f('ix_measurement_accelerator_slug'))

    op.drop_table('measurement')
