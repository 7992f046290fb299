"""build accelerator groups and host

Every build's single (accelerator, accelerators_per_node) becomes group 0 of the new
build_accelerator_group table, so no build changes meaning. The pairs are staged in a plain table
first: on SQLite, batch mode rebuilds `build` (drop + rename), which with foreign keys on would
cascade-delete group rows that already pointed at it. Downgrade keeps the first group's card and
the total count per node (a mixed build loses its other card kinds).

Revision ID: 8efd47fcfc8a
Revises: 0f9b43e22edc
Create Date: 2026-12-01 08:11:04.326481
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '8efd47fcfc8a'
down_revision: str | None = '0f9b43e22edc'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STAGING = 'build_group_staging'


def _staging_table() -> None:
    op.create_table(
        STAGING,
        sa.Column('build_id', sa.Integer(), primary_key=True),
        sa.Column('accelerator_id', sa.Integer(), nullable=False),
        sa.Column('count_per_node', sa.Integer(), nullable=False),
    )


def upgrade() -> None:
    _staging_table()
    op.execute(
        f"INSERT INTO {STAGING} (build_id, accelerator_id, count_per_node)"
        " SELECT id, accelerator_id, accelerators_per_node FROM build"
    )
    with op.batch_alter_table('build', schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f('ck_build_accelerators_per_node_positive'), type_='check'
        )
        batch_op.drop_index(batch_op.f('ix_build_accelerator_id'))
        batch_op.drop_constraint(batch_op.f('fk_build_accelerator_id_accelerator'), type_='foreignkey')
        batch_op.drop_column('accelerators_per_node')
        batch_op.drop_column('accelerator_id')
        batch_op.add_column(sa.Column('host_cpu', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('host_cpu_cores', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('host_ram_channels', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('host_ram_speed_mts', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('host_ram_bandwidth_gbs', sa.Float(), nullable=True))
        batch_op.create_check_constraint(
            batch_op.f('ck_build_host_cpu_cores'), 'host_cpu_cores IS NULL OR host_cpu_cores >= 1'
        )
        batch_op.create_check_constraint(
            batch_op.f('ck_build_host_ram_bandwidth_positive'),
            'host_ram_bandwidth_gbs IS NULL OR host_ram_bandwidth_gbs > 0',
        )
        batch_op.create_check_constraint(
            batch_op.f('ck_build_host_ram_channels'),
            'host_ram_channels IS NULL OR host_ram_channels >= 1',
        )
        batch_op.create_check_constraint(
            batch_op.f('ck_build_host_ram_speed'),
            'host_ram_speed_mts IS NULL OR host_ram_speed_mts > 0',
        )

    op.create_table('build_accelerator_group',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('accelerator_id', sa.Integer(), nullable=False),
    sa.Column('count_per_node', sa.Integer(), nullable=False),
    sa.Column('pcie_generation', sa.Integer(), nullable=True),
    sa.Column('pcie_lanes', sa.Integer(), nullable=True),
    sa.CheckConstraint('count_per_node >= 1', name=op.f('ck_build_accelerator_group_count_per_node_positive')),
    sa.CheckConstraint('pcie_generation IS NULL OR pcie_generation BETWEEN 1 AND 7', name=op.f('ck_build_accelerator_group_pcie_generation')),
    sa.CheckConstraint('pcie_lanes IS NULL OR pcie_lanes IN (1, 2, 4, 8, 16)', name=op.f('ck_build_accelerator_group_pcie_lanes')),
    sa.CheckConstraint('position >= 0', name=op.f('ck_build_accelerator_group_position_not_negative')),
    sa.ForeignKeyConstraint(['accelerator_id'], ['accelerator.id'], name=op.f('fk_build_accelerator_group_accelerator_id_accelerator'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['build_id'], ['build.id'], name=op.f('fk_build_accelerator_group_build_id_build'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_build_accelerator_group'))
    )
    with op.batch_alter_table('build_accelerator_group', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_build_accelerator_group_accelerator_id'), ['accelerator_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_build_accelerator_group_build_id'), ['build_id'], unique=False)
    op.execute(
        "INSERT INTO build_accelerator_group (build_id, position, accelerator_id, count_per_node)"
        f" SELECT build_id, 0, accelerator_id, count_per_node FROM {STAGING}"
    )
    op.drop_table(STAGING)


def downgrade() -> None:
    _staging_table()
    op.execute(
        f"INSERT INTO {STAGING} (build_id, accelerator_id, count_per_node)"
        " SELECT g.build_id,"
        " (SELECT f.accelerator_id FROM build_accelerator_group f"
        "  WHERE f.build_id = g.build_id ORDER BY f.position LIMIT 1),"
        " SUM(g.count_per_node) FROM build_accelerator_group g GROUP BY g.build_id"
    )
    with op.batch_alter_table('build_accelerator_group', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_build_accelerator_group_build_id'))
        batch_op.drop_index(batch_op.f('ix_build_accelerator_group_accelerator_id'))
    op.drop_table('build_accelerator_group')

    with op.batch_alter_table('build', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_build_host_ram_speed'), type_='check')
        batch_op.drop_constraint(batch_op.f('ck_build_host_ram_channels'), type_='check')
        batch_op.drop_constraint(batch_op.f('ck_build_host_ram_bandwidth_positive'), type_='check')
        batch_op.drop_constraint(batch_op.f('ck_build_host_cpu_cores'), type_='check')
        batch_op.drop_column('host_ram_bandwidth_gbs')
        batch_op.drop_column('host_ram_speed_mts')
        batch_op.drop_column('host_ram_channels')
        batch_op.drop_column('host_cpu_cores')
        batch_op.drop_column('host_cpu')
        batch_op.add_column(sa.Column('accelerator_id', sa.INTEGER(), nullable=True))
        batch_op.add_column(sa.Column('accelerators_per_node', sa.INTEGER(), nullable=True))
    op.execute(
        "UPDATE build SET"
        f" accelerator_id = (SELECT s.accelerator_id FROM {STAGING} s WHERE s.build_id = build.id),"
        f" accelerators_per_node = (SELECT s.count_per_node FROM {STAGING} s"
        " WHERE s.build_id = build.id)"
    )
    with op.batch_alter_table('build', schema=None) as batch_op:
        batch_op.alter_column('accelerator_id', existing_type=sa.INTEGER(), nullable=False)
        batch_op.alter_column('accelerators_per_node', existing_type=sa.INTEGER(), nullable=False)
        batch_op.create_foreign_key(batch_op.f('fk_build_accelerator_id_accelerator'), 'accelerator', ['accelerator_id'], ['id'], ondelete='RESTRICT')
        batch_op.create_index(batch_op.f('ix_build_accelerator_id'), ['accelerator_id'], unique=False)
        batch_op.create_check_constraint(
            batch_op.f('ck_build_accelerators_per_node_positive'), 'accelerators_per_node >= 1'
        )
    op.drop_table(STAGING)
