"""Train Veličković et al.'s GAT on Cora with sparsetir.ops (SDDMM, edge softmax, SpMM), torch.sparse or PyG.

    python examples/gnn/gat.py                       # sparsetir backend, the Planetoid Cora data
    python examples/gnn/gat.py --backend torch       # the same model on torch.sparse
    python examples/gnn/gat.py --features cora.npz   # another Planetoid-style data file (docs/gnn.md)

Prints the loss of every epoch, the test accuracy and the epoch time.
Training follows the paper: up to 1000 epochs, stopped once the validation accuracy and loss
have not improved for 100 epochs, keeping the parameters of the best validation epoch.
"""

from __future__ import annotations

import argparse
import statistics

from sparsetir import data
from sparsetir.models import BACKENDS, Graph, load_node_data, make_model, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=BACKENDS, default="sparsetir")
    parser.add_argument("--dataset", default="cora", help="a bundled graph (default: cora)")
    parser.add_argument("--features", metavar="PATH", help="a Planetoid-style .npz (x, y, train_mask, val_mask, test_mask); default: the "
                        "bundled Planetoid data of Cora and CiteSeer, synthetic data for other graphs")
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--patience", type=int, default=100,
                        help="stop after this many epochs without a better validation accuracy or loss (default: 100)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    graph = Graph(data.load(args.dataset))
    node_data = load_node_data(args.dataset, graph.adjacency, args.features, args.seed)
    print(f"data: {node_data.describe()}")
    model = make_model("gat", args.backend, graph, node_data, args.seed)

    def report(epoch: int, loss: float, seconds: float) -> None:
        print(f"epoch {epoch + 1:3d}  loss {loss:.4f}  {1e3 * seconds:7.2f} ms")

    run = train(model, node_data, args.epochs, args.seed, on_epoch=report, patience=args.patience)
    print(f"GAT on {args.backend}: test accuracy {100 * run.test_accuracy:.1f}% "
          f"(validation {100 * run.val_accuracy:.1f}%) at epoch {run.kept_epoch + 1} of {len(run.losses)}; "
          f"{1e3 * statistics.median(run.seconds):.2f} ms/epoch (median; first epoch "
          f"{1e3 * run.seconds[0]:.0f} ms), {sum(run.seconds):.1f} s in all")
    if node_data.synthetic:
        print("(synthetic data: not comparable with the published 83.0%; see docs/gnn.md)")


if __name__ == "__main__":
    main()
