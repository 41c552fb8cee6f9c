/** The system page (`#/system`): the gateway's own state, one section per concern. */
import { NorthboundTargets } from './northbound.js';

export function SystemPage() {
  return (
    <main id="main">
      <header class="page-head"><h1>System</h1></header>
      <NorthboundTargets />
    </main>
  );
}
