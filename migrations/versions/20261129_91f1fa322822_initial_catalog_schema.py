"""initial catalog schema

Revision ID: 91f1fa322822
Revises: 
Create Date: 2026-11-29 15:47:36.932465
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '91f1fa322822'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('accelerator',
    sa.Column('vendor', sa.String(length=200), nullable=False),
    sa.Column('memory_gb', sa.Float(), nullable=False),
    sa.Column('memory_kind', sa.String(length=16), nullable=False),
    sa.Column('memory_type', sa.String(length=200), nullable=True),
    sa.Column('memory_bandwidth_gbs', sa.Float(), nullable=False),
    sa.Column('fp16_tflops', sa.Float(), nullable=False),
    sa.Column('bf16_tflops', sa.Float(), nullable=True),
    sa.Column('fp8_tflops', sa.Float(), nullable=True),
    sa.Column('int8_tops', sa.Float(), nullable=True),
    sa.Column('fp4_tflops', sa.Float(), nullable=True),
    sa.Column('tdp_w', sa.Float(), nullable=True),
    sa.Column('price_usd', sa.Float(), nullable=True),
    sa.Column('price_source_url', sa.String(length=500), nullable=True),
    sa.Column('price_as_of', sa.Date(), nullable=True),
    sa.Column('launch_year', sa.Integer(), nullable=True),
    sa.Column('host_interface', sa.String(length=200), nullable=True),
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(length=160), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('estimated', sa.JSON(), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('as_of', sa.Date(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("memory_kind IN ('discrete', 'unified')", name=op.f('ck_accelerator_memory_kind')),
    sa.CheckConstraint('fp16_tflops > 0', name=op.f('ck_accelerator_fp16_tflops_positive')),
    sa.CheckConstraint('memory_bandwidth_gbs > 0', name=op.f('ck_accelerator_memory_bandwidth_positive')),
    sa.CheckConstraint('memory_gb > 0', name=op.f('ck_accelerator_memory_gb_positive')),
    sa.CheckConstraint('price_usd IS NULL OR price_usd >= 0', name=op.f('ck_accelerator_price_not_negative')),
    sa.CheckConstraint('tdp_w IS NULL OR tdp_w > 0', name=op.f('ck_accelerator_tdp_positive')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_accelerator'))
    )
    with op.batch_alter_table('accelerator', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_accelerator_slug'), ['slug'], unique=True)
        batch_op.create_index(batch_op.f('ix_accelerator_vendor'), ['vendor'], unique=False)

    op.create_table('api_token',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_token')),
    sa.UniqueConstraint('name', name=op.f('uq_api_token_name')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_token_token_hash'))
    )
    op.create_table('audit_event',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.String(length=80), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('slug', sa.String(length=80), nullable=False),
    sa.Column('before', sa.JSON(), nullable=True),
    sa.Column('after', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_event'))
    )
    with op.batch_alter_table('audit_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_audit_event_at'), ['at'], unique=False)
        batch_op.create_index(batch_op.f('ix_audit_event_slug'), ['slug'], unique=False)

    op.create_table('catalog_state',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_catalog_state'))
    )
    # The single row every write bumps; caches key on its version.
    op.execute("INSERT INTO catalog_state (id, version, updated_at) VALUES (1, 0, CURRENT_TIMESTAMP)")
    op.create_table('login_attempt',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('client_key', sa.String(length=128), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('succeeded', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_login_attempt'))
    )
    with op.batch_alter_table('login_attempt', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_login_attempt_at'), ['at'], unique=False)
        batch_op.create_index(batch_op.f('ix_login_attempt_client_key'), ['client_key'], unique=False)

    op.create_table('model_profile',
    sa.Column('organization', sa.String(length=200), nullable=False),
    sa.Column('license', sa.String(length=200), nullable=False),
    sa.Column('params_total', sa.BigInteger(), nullable=False),
    sa.Column('params_active', sa.BigInteger(), nullable=False),
    sa.Column('max_context_tokens', sa.Integer(), nullable=True),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('architecture', sa.String(length=200), nullable=False),
    sa.Column('attention', sa.String(length=16), nullable=False),
    sa.Column('is_moe', sa.Boolean(), nullable=False),
    sa.Column('num_hidden_layers', sa.Integer(), nullable=False),
    sa.Column('hidden_size', sa.Integer(), nullable=False),
    sa.Column('num_attention_heads', sa.Integer(), nullable=False),
    sa.Column('num_key_value_heads', sa.Integer(), nullable=False),
    sa.Column('head_dim', sa.Integer(), nullable=False),
    sa.Column('vocab_size', sa.Integer(), nullable=False),
    sa.Column('n_routed_experts', sa.Integer(), nullable=False),
    sa.Column('num_experts_per_tok', sa.Integer(), nullable=False),
    sa.Column('kv_lora_rank', sa.Integer(), nullable=True),
    sa.Column('sliding_window', sa.Integer(), nullable=True),
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(length=160), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('estimated', sa.JSON(), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('as_of', sa.Date(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('hidden_size > 0', name=op.f('ck_model_profile_hidden_size_positive')),
    sa.CheckConstraint('num_hidden_layers > 0', name=op.f('ck_model_profile_layers_positive')),
    sa.CheckConstraint('params_active > 0 AND params_active <= params_total', name=op.f('ck_model_profile_params_active')),
    sa.CheckConstraint('params_total > 0', name=op.f('ck_model_profile_params_total_positive')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_model_profile'))
    )
    with op.batch_alter_table('model_profile', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_model_profile_slug'), ['slug'], unique=True)

    op.create_table('build',
    sa.Column('tier', sa.String(length=16), nullable=False),
    sa.Column('nodes', sa.Integer(), nullable=False),
    sa.Column('accelerator_id', sa.Integer(), nullable=False),
    sa.Column('accelerators_per_node', sa.Integer(), nullable=False),
    sa.Column('intra_node_link_kind', sa.String(length=32), nullable=False),
    sa.Column('intra_node_bandwidth_gbs', sa.Float(), nullable=True),
    sa.Column('intra_node_latency_us', sa.Float(), nullable=True),
    sa.Column('inter_node_link_kind', sa.String(length=32), nullable=False),
    sa.Column('inter_node_bandwidth_gbps', sa.Float(), nullable=True),
    sa.Column('inter_node_latency_us', sa.Float(), nullable=True),
    sa.Column('scale_up_domain_accelerators', sa.Integer(), nullable=True),
    sa.Column('host_memory_gb', sa.Float(), nullable=True),
    sa.Column('power_w', sa.Float(), nullable=True),
    sa.Column('price_usd', sa.Float(), nullable=True),
    sa.Column('price_source_url', sa.String(length=500), nullable=True),
    sa.Column('price_as_of', sa.Date(), nullable=True),
    sa.Column('failover', sa.String(length=200), nullable=False),
    sa.Column('scheduling', sa.String(length=200), nullable=False),
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=80), nullable=False),
    sa.Column('name', sa.String(length=160), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('estimated', sa.JSON(), nullable=False),
    sa.Column('source_url', sa.String(length=500), nullable=False),
    sa.Column('as_of', sa.Date(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("inter_node_link_kind IN ('infiniband', 'ethernet', 'none')", name=op.f('ck_build_inter_kind')),
    sa.CheckConstraint("intra_node_link_kind IN ('pcie', 'nvlink', 'nvswitch', 'infinity_fabric', 'unified', 'none')", name=op.f('ck_build_intra_kind')),
    sa.CheckConstraint("tier IN ('desktop', 'dgx', 'cluster')", name=op.f('ck_build_tier')),
    sa.CheckConstraint('accelerators_per_node >= 1', name=op.f('ck_build_accelerators_per_node_positive')),
    sa.CheckConstraint('host_memory_gb IS NULL OR host_memory_gb >= 0', name=op.f('ck_build_host_memory')),
    sa.CheckConstraint('inter_node_bandwidth_gbps IS NULL OR inter_node_bandwidth_gbps > 0', name=op.f('ck_build_inter_bandwidth_positive')),
    sa.CheckConstraint('intra_node_bandwidth_gbs IS NULL OR intra_node_bandwidth_gbs > 0', name=op.f('ck_build_intra_bandwidth_positive')),
    sa.CheckConstraint('nodes >= 1', name=op.f('ck_build_nodes_positive')),
    sa.CheckConstraint('power_w IS NULL OR power_w > 0', name=op.f('ck_build_power_positive')),
    sa.CheckConstraint('price_usd IS NULL OR price_usd >= 0', name=op.f('ck_build_price_not_negative')),
    sa.ForeignKeyConstraint(['accelerator_id'], ['accelerator.id'], name=op.f('fk_build_accelerator_id_accelerator'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_build'))
    )
    with op.batch_alter_table('build', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_build_accelerator_id'), ['accelerator_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_build_slug'), ['slug'], unique=True)
        batch_op.create_index(batch_op.f('ix_build_tier'), ['tier'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('build', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_build_tier'))
        batch_op.drop_index(batch_op.f('ix_build_slug'))
        batch_op.drop_index(batch_op.f('ix_build_accelerator_id'))

    op.drop_table('build')
    with op.batch_alter_table('model_profile', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_model_profile_slug'))

    op.drop_table('model_profile')
    with op.batch_alter_table('login_attempt', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_login_attempt_client_key'))
        batch_op.drop_index(batch_op.f('ix_login_attempt_at'))

    op.drop_table('login_attempt')
    op.drop_table('catalog_state')
    with op.batch_alter_table('audit_event', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_audit_event_slug'))
        batch_op.drop_index(batch_op.f('ix_audit_event_at'))

    op.drop_table('audit_event')
    op.drop_table('api_token')
    with op.batch_alter_table('accelerator', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_accelerator_vendor'))
        batch_op.drop_index(batch_op.f('ix_accelerator_slug'))

    op.drop_table('accelerator')
