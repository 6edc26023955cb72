/**
 * Table output (meta.k8s.io/v1 Table): what `kubectl get` prints. Kinds declare extra columns;
 * Name comes first and Age last, as Kubernetes' printers do. Without declared columns the
 * conventions document's default applies: Name and Created At.
 */
import type { KindDeclaration, TableColumn } from './kind.types.js';
import type { KubeObject } from '@app/apimachinery';

/** meta/v1 TableColumnDefinition. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** meta/v1 TableRow; `object` is PartialObjectMetadata (includeObject=Metadata, the default). */
export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

/** meta/v1 Table. */
export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: Record<string, unknown>;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/**
 * Kubernetes' HumanDuration (apimachinery/pkg/util/duration): "45s", "3m20s", "5h", "2d3h",
 * "1y30d". Seconds below -1 are "<invalid>" (clock skew tolerance of 2 s).
 */
export function humanDuration(ms: number): string {
  // Go truncates toward zero (int(d.Seconds())), so -1.5 s is -1 s: "0s", not "<invalid>".
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    const y = Math.floor(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** Age of an object as kubectl shows it, from metadata.creationTimestamp. */
export function ageOf(obj: KubeObject, now: Date): string {
  const ts = obj.metadata.creationTimestamp;
  if (typeof ts !== 'string') return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now.getTime() - t);
}

const NAME_COLUMN: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
  cell: (o) => o.metadata.name ?? '',
};

const AGE_COLUMN: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'Time since the object was created (metadata.creationTimestamp).',
  priority: 0,
  cell: (o, now) => ageOf(o, now),
};

const CREATED_AT_COLUMN: TableColumn = {
  name: 'Created At',
  type: 'date',
  description: 'When the object was created.',
  priority: 0,
  cell: (o) => o.metadata.creationTimestamp ?? '',
};

/** The columns of a kind, Name first. */
export function columnsOf(decl: KindDeclaration): TableColumn[] {
  const name = decl.nameCell ? { ...NAME_COLUMN, cell: decl.nameCell } : NAME_COLUMN;
  if (!decl.tableColumns) return [name, CREATED_AT_COLUMN];
  const hasAge = decl.ageColumn === false || decl.tableColumns.some((c) => c.name === 'Age');
  return [name, ...decl.tableColumns, ...(hasAge ? [] : [AGE_COLUMN])];
}

/** PartialObjectMetadata of an object (what Table rows and metadata-only clients get). */
export function partialObjectMetadata(obj: KubeObject, version = 'v1'): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

/**
 * Builds a Table of `objects`. `includeObject` follows the request parameter
 * (None | Metadata | Object; default Metadata). `withHeaders` false omits columnDefinitions
 * (watch events after the first).
 */
export function toTable(
  decl: KindDeclaration,
  objects: KubeObject[],
  opts: { now: Date; listMeta?: Record<string, unknown>; includeObject?: string; version?: string; withHeaders?: boolean },
): Table {
  const cols = columnsOf(decl);
  const include = opts.includeObject ?? 'Metadata';
  const version = opts.version ?? 'v1';
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: opts.listMeta ?? {},
    columnDefinitions:
      opts.withHeaders === false
        ? []
        : cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority })),
    rows: objects.map((o) => {
      const row: TableRow = { cells: cols.map((c) => c.cell(o, opts.now)) };
      if (include === 'Object') row.object = o;
      else if (include !== 'None') row.object = partialObjectMetadata(o, version);
      return row;
    }),
  };
}
