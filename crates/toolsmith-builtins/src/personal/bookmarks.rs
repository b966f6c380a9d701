//! Bookmarks (003 §2): saved URLs with a title, a description, a category, tags and a
//! favourite flag. A URL saved twice is one bookmark (dedup on the URL, without case).
//! Indexed: category, favourite as `weight`, tags.

use toolsmith_core::data::RecordOrder;

use super::fields::{Field, FieldKind};
use super::{BY_CREATED, Family, Index, Op, Sort, ToolSpec, Weight};

static FIELDS: &[Field] = &[
    Field::new(
        "url",
        FieldKind::Url,
        "The URL to bookmark (http or https).",
    )
    .required()
    .searched(),
    Field::new("title", FieldKind::Text(500), "Bookmark title.").searched(),
    Field::new("description", FieldKind::Text(2000), "Brief description.").searched(),
    Field::new(
        "category",
        FieldKind::Text(100),
        "Category (e.g. \"reading\", \"tech\", \"recipes\").",
    )
    .searched(),
    Field::new("tags", FieldKind::Tags, "Tags for the bookmark.").searched(),
    Field::new("isFavorite", FieldKind::Flag, "Mark as favorite."),
];

pub static FAMILY: Family = Family {
    collection: "bookmark",
    plural: "bookmarks",
    noun: "bookmark",
    category: "Bookmarks",
    id_prefix: "bm",
    id_param: "bookmarkId",
    one: "bookmark",
    many: "bookmarks",
    batch_param: "bookmarks",
    list_tool: "list_bookmarks",
    fields: FIELDS,
    index: Index {
        kind: None,
        category: Some("category"),
        weight: Weight::Flag("isFavorite"),
        at: None,
        tags: Some("tags"),
    },
    range: None,
    sorts: &[
        BY_CREATED,
        Sort {
            name: "favorites",
            order: RecordOrder::Weight,
            description: "favorites first, then newest",
        },
    ],
    tools: TOOLS,
    dedup: Some("url"),
    check: None,
    rules: None,
};

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "add_bookmark",
        op: Op::Add,
        description: "Save a URL as a bookmark (a link to come back to), with a title, description, \
         category and tags. Saving the same URL twice keeps one bookmark.",
        tags: &[
            "bookmark",
            "link",
            "url",
            "save",
            "favorite",
            "website",
            "read later",
            "add",
        ],
    },
    ToolSpec {
        name: "batch_add_bookmarks",
        op: Op::BatchAdd,
        description: "Add multiple bookmarks at once (up to 50), each like add_bookmark.",
        tags: &["bookmark", "link", "url", "batch", "many", "bulk", "save"],
    },
    ToolSpec {
        name: "list_bookmarks",
        op: Op::List,
        description: "List saved bookmarks with filtering by category, tags, favorites and words in their \
         title, URL or description.",
        tags: &[
            "bookmark",
            "link",
            "url",
            "list",
            "saved",
            "show",
            "favorites",
        ],
    },
    ToolSpec {
        name: "delete_bookmark",
        op: Op::Delete,
        description: "Delete a bookmark.",
        tags: &["bookmark", "link", "delete", "remove"],
    },
];
