export type LimitSource = 'config' | 'schedule' | 'operator' | 'feed' | 'fallback';
export interface NodeLimit {
  nodeId: string;
  watts: number;
  source: LimitSource;
}
export interface LimitReader {
  limit(nodeId: string): NodeLimit;
  onChange(listener: () => void): () => void;
}
