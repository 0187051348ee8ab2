/** `networking.k8s.io/v1` NetworkPolicy: which traffic selected pods accept and send. */
import type { KubeObject, LabelSelector } from './meta.ts';

export interface NetworkPolicyPort {
  protocol?: string;
  /** A number, or a named container port. */
  port?: number | string;
  endPort?: number;
}

export interface IPBlock {
  cidr: string;
  except?: string[];
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: IPBlock;
}

export interface NetworkPolicyIngressRule {
  from?: NetworkPolicyPeer[];
  ports?: NetworkPolicyPort[];
}

export interface NetworkPolicyEgressRule {
  to?: NetworkPolicyPeer[];
  ports?: NetworkPolicyPort[];
}

export interface NetworkPolicySpec {
  podSelector: LabelSelector;
  policyTypes?: ('Ingress' | 'Egress')[];
  ingress?: NetworkPolicyIngressRule[];
  egress?: NetworkPolicyEgressRule[];
}

export interface NetworkPolicy extends KubeObject {
  spec?: NetworkPolicySpec;
}
